package handoff

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/sshtest"
)

// shells are the shells a line may be pasted into that this machine has:
// sh at least, and bash, zsh and fish when installed. The test logs which.
func shells(tb testing.TB) []string {
	tb.Helper()
	var found []string
	for _, name := range []string{"sh", "bash", "zsh", "fish"} {
		if p, err := exec.LookPath(name); err == nil {
			found = append(found, p)
		}
	}
	require.NotEmpty(tb, found, "no sh on PATH")
	return found
}

// run runs script with shell -c, HOME set to home, and returns its output.
func run(tb testing.TB, shell, home, script string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-c", script)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	out, err := cmd.Output()
	require.NoError(tb, err, "%s -c %q", shell, script)
	return string(out)
}

// quoteSeeds are the paths the quoting must survive, and the fuzz seeds.
var quoteSeeds = []string{
	"", "plain", "/srv/app/.worktrees/fix", "with space", "it's", "''", `\`, `a\b`, `\'`, `'\`,
	"$HOME", "`id`", "$(id)", `"double"`, "!x", "!!", "a\nb", "\n", "trailing\n", "\t", "-rf", "--", "-",
	"~", "~/src", "~root", "*", "?", "[a]", "{a,b}", "a;b", "a&&b", "a|b", "a>b", "#x", "%self",
	"=cmd", "a=b", "ünïcode 日本😀", "\u00a0nbsp", "\\\\'''\\\\",
}

// TestQuoteRoundTrip: what word, command and homeRelative write is read
// back as the same bytes by every shell here, directly and (command)
// through a second sh -c.
func TestQuoteRoundTrip(t *testing.T) {
	sh := shells(t)
	t.Logf("shells: %v", sh)
	for _, shell := range sh {
		for _, s := range quoteSeeds {
			checkRoundTrip(t, shell, s)
		}
	}
}

// checkRoundTrip checks s through shell: as one word, as a command run by
// sh -c inside it, and after ~/.
func checkRoundTrip(t *testing.T, shell, s string) {
	t.Helper()
	if strings.ContainsRune(s, 0) {
		return // no argument or path can hold a NUL
	}
	assert.Equal(t, s, run(t, shell, "/h", "printf %s "+word(s)), "%s: word %q", shell, word(s))
	inner := "printf %s " + word(s)
	assert.Equal(t, s, run(t, shell, "/h", "sh -c "+command(inner)), "%s: sh -c %s", shell, command(inner))
	home := "/h/" + s
	if s == "" {
		home = "/h" // ~/ alone is written ~
	}
	assert.Equal(t, home, run(t, shell, "/h", "printf %s "+homeRelative("~/"+s)), "%s: %s", shell, homeRelative("~/"+s))
}

// FuzzQuoteRoundTrip: any bytes survive word, command and homeRelative
// through sh and bash (and zsh and fish, when installed, for UTF-8: the
// only text a line shown in a message holds).
func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	sh := shells(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, shell := range sh {
			if (strings.HasSuffix(shell, "/zsh") || strings.HasSuffix(shell, "/fish")) && !utf8.ValidString(s) {
				continue
			}
			checkRoundTrip(t, shell, s)
		}
	})
}

func TestCommandForm(t *testing.T) {
	assert.Equal(t, `"cd '/x' && claude"`, command("cd '/x' && claude"), "double quotes when nothing is special in them")
	for _, special := range []string{"$", "`", `\`, `"`, "!", "\n"} {
		c := "cd '/x" + special + "' && claude"
		assert.Equal(t, quoted(c), command(c), "%q forces single quotes", special)
	}
	assert.Equal(t, "''", command(""))
}

// TestQuoteFishLikeLoginShell: a remote login shell that reads command
// lines by fish's rules (sshtest's fishlike, behind a real sshd) reads
// every word as sh does, including \' and \\, which fish would take as
// escapes inside single quotes.
func TestQuoteFishLikeLoginShell(t *testing.T) {
	srv := sshtest.Start(t, sshtest.FishLike())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var words, want strings.Builder
	for _, s := range quoteSeeds {
		words.WriteString(" " + word(s))
		want.WriteString("[" + s + "]")
	}
	out, err := srv.Run(ctx, "printf '[%s]'"+words.String())
	require.NoError(t, err)
	assert.Equal(t, want.String(), out)
}

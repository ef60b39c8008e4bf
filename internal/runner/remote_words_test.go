package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/sshtest"
)

// hostileWords are arguments and directories no quoting survives in every
// login shell: quotes, backslashes before quotes (fish's \' inside single
// quotes), command separators and substitutions, globs, history
// expansion, newlines, leading dashes, digits after an escape, empty.
var hostileWords = []string{
	"plain", "", " lead and trail ", "it's", `it\'s;touch PWNED;#`, `x\';touch PWNED;#'`, `back\slash`, `\\`, `\`,
	"$HOME", "${IFS}", "$(touch PWNED)", "`touch PWNED`", "a;b", "a|b", "a&b", "a>b", "!!", "!$", "*", "?", "[1m]", "~", "~/x",
	"a\nb", "trailing newline\n", "\n", "a\\\n7", "\\07", "%s%b%%", `\c`, `\0101`, "--dangerously-skip-permissions", "-", "é ☃",
	"tab\there", "cr\rhere", "\x01\x7f", `"double"`, "{a,b}", "#comment", "a'b\"c\\d$e`f",
}

// runPreamble decodes remoteInput with shell, the way a remote script
// does, and returns the directory word and the other words.
func runPreamble(t *testing.T, shell string, in []byte) []string {
	t.Helper()
	cmd := exec.Command(shell, "-c", remotePreamble+`printf '%s\0' "$dir" "$@"`)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s", stderr.String())
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// TestRemoteWordsSurviveThePreamble: every word reaches the remote
// script's positional parameters byte for byte, under each POSIX shell
// the machine has, and the environment is exported.
func TestRemoteWordsSurviveThePreamble(t *testing.T) {
	words := append([]string{"/srv/it's a dir/$x"}, hostileWords...)
	env, err := remoteEnv(nil, map[string]string{"GREETING": "hello 'quoted' $world"})
	require.NoError(t, err)
	in, err := remoteInput(env, words[0], words[1:]...)
	require.NoError(t, err)
	shells := 0
	for _, shell := range []string{"sh", "dash", "bash", "mksh", "ksh", "zsh"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		shells++
		t.Run(shell, func(t *testing.T) {
			assert.Equal(t, words, runPreamble(t, path, in))
			cmd := exec.Command(path, "-c", remotePreamble+`printf %s "$GREETING"`)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Equal(t, "hello 'quoted' $world", string(out))
		})
	}
	require.NotZero(t, shells)

	t.Run("~/ is the login's home, not a HOME the environment sets", func(t *testing.T) {
		env, err := remoteEnv(nil, map[string]string{"HOME": "/configured/home"})
		require.NoError(t, err)
		in, err := remoteInput(env, "~/src", "x")
		require.NoError(t, err)
		assert.Equal(t, []string{"/nonexistent/src", "x"}, runPreamble(t, "sh", in))
	})
	t.Run("a cut or malformed preamble is refused", func(t *testing.T) {
		for _, in := range []string{"", "A=1\n", "\n", "\nx\n", "\n0\n", "\n3\na\nb\n", "\n-1\n"} {
			cmd := exec.Command("sh", "-c", remotePreamble+`echo ran`)
			cmd.Stdin = strings.NewReader(in)
			out, err := cmd.Output()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%q", in)
			assert.Equal(t, remoteBadInput, exit.ExitCode(), "%q", in)
			assert.Empty(t, out)
		}
	})
	_, err = remoteWords([]string{"a\x00b"})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// TestRemoteCommandIsAConstant: the command ssh runs is the same for every
// session, one single-quoted word without ' \ ! or a newline (which every
// login shell, fish and csh included, reads alike), and no directory,
// model, argument or variable of a session is on ssh's command line: the
// exact argv of ssh.
func TestRemoteCommandIsAConstant(t *testing.T) {
	for name, script := range map[string]string{"session": remoteWrapper, "check": remoteCheckScript} {
		assert.NotContains(t, script, "'", name)
		assert.NotContains(t, script, `\`, name)
		// $! is the one "!": csh's history expansion needs an interactive
		// shell (tcsh 6.24 and bsd-csh -c leave it alone).
		assert.NotContains(t, strings.ReplaceAll(script, "$!", ""), "!", name)
		assert.NotContains(t, script, "\n", name)
	}
	dir := "/srv/it's/" + `x\';touch PWNED;#`
	const model = "claude-sonnet-4-5[1m]"
	prompt := "it\\'s;touch PWNED;#\n$(id) `id`"
	s, err := NewSession(Config{Binary: "/opt/claude bin/claude", Workdir: dir, Model: model,
		ExtraArgs: []string{"--append-system-prompt", prompt}, Env: map[string]string{"SECRET_VALUE": "s3cr3t"},
		Remote: &Remote{Host: "dev@build01", SSHOptions: []string{"-p", "2222"}}}, "", false, 0)
	require.NoError(t, err)
	args := s.args(s.ID(), false)
	l, err := s.remoteLaunch("/usr/bin/ssh", args)
	require.NoError(t, err)
	assert.Equal(t, "/usr/bin/ssh", l.bin)
	assert.Equal(t, []string{"-T", "-o", "BatchMode=yes", "-p", "2222", "dev@build01", "--", "sh -c '" + remoteWrapper + "' untether"}, l.args)
	for _, a := range l.args {
		for _, v := range []string{"PWNED", "claude bin", "sonnet", "s3cr3t", string(s.ID())} {
			assert.NotContains(t, a, v, "ssh's command line")
		}
	}
	for _, kv := range l.env {
		assert.NotContains(t, kv, "s3cr3t", "the local ssh's environment")
	}
	// All of it goes on stdin instead, and the wrapper gets it back intact.
	got := runPreamble(t, "sh", l.stdin)
	assert.Equal(t, append([]string{dir, "/opt/claude bin/claude"}, args...), got)
	assert.Contains(t, got, "--model="+model)
	assert.Contains(t, got, prompt)
	assert.Contains(t, string(l.stdin), "SECRET_VALUE=s3cr3t\n")
}

// TestRemoteCommandUnderEachLoginShell runs the command ssh sends the way
// sshd does, as `<login shell> -c <command>`, under each login shell the
// machine has (fish, csh and zsh when installed): the stand-in CLI gets
// its directory and arguments intact, and nothing else runs.
func TestRemoteCommandUnderEachLoginShell(t *testing.T) {
	shells := 0
	for _, shell := range []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "bsd-csh"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		shells++
		t.Run(shell, func(t *testing.T) {
			base := t.TempDir()
			pwned := filepath.Join(base, "PWNED")
			dir := filepath.Join(base, "it's a \"dir\"")
			require.NoError(t, os.Mkdir(dir, 0o755))
			out := filepath.Join(base, "argv")
			words := []string{`it\';touch ` + pwned + `;#'`, "x';touch " + pwned + ";'", "a\nb", "$HOME", "!!"}
			env, err := remoteEnv(nil, map[string]string{"GREETING": "hi"})
			require.NoError(t, err)
			in, err := remoteInput(env, dir, append([]string{writeArgvCLI(t, out)}, words...)...)
			require.NoError(t, err)
			cmd := exec.Command(path, "-c", remoteCommand(remoteWrapper))
			cmd.Stdin, cmd.Env = bytes.NewReader(in), []string{"PATH=" + os.Getenv("PATH"), "HOME=" + base}
			combined, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", combined)
			raw, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, append(words, dir+"\n"), strings.Split(string(raw), "\x00"))
			assert.NoFileExists(t, pwned)
		})
	}
	require.NotZero(t, shells)
}

// writeArgvCLI writes a stand-in CLI that records its argv (NUL-separated)
// and working directory in out, and prints nothing.
func writeArgvCLI(t *testing.T, out string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nprintf '%s\\0' \"$@\" > " + out + ".tmp && pwd >> " + out + ".tmp && mv " + out + ".tmp " + out + "\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin
}

// TestRemoteArgvOverSSH: through a real sshd, under the login shell and
// under one that reads command lines as fish does, the remote CLI gets
// exactly the directory and the arguments the session has, whatever bytes
// they hold, and nothing in them runs as a command over there: not even a
// prompt written to break a POSIX quoting where fish reads it (before,
// that one ran touch on a fish login).
func TestRemoteArgvOverSSH(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	require.NoError(t, err)
	for name, opts := range map[string][]sshtest.Option{"login shell": nil, "fish-like login shell": {sshtest.FishLike()}} {
		t.Run(name, func(t *testing.T) {
			srv := sshtest.Start(t, opts...)
			for _, tc := range []struct {
				name  string
				words []string
			}{
				{"every kind of byte", hostileWords},
				{"a prompt that breaks out of POSIX quoting in fish", []string{"--append-system-prompt", `it\'s;touch PWNED;#`}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					base := t.TempDir()
					pwned := filepath.Join(base, "PWNED")
					var words []string
					for _, w := range tc.words {
						if CheckExtraArgs([]string{w}) == nil { // a flag untether manages is refused before
							words = append(words, strings.ReplaceAll(w, "PWNED", pwned))
						}
					}
					dir := filepath.Join(base, "it's a \"dir\" $(x) `y`\n;#")
					require.NoError(t, os.Mkdir(dir, 0o755))
					out := filepath.Join(base, "argv")
					s, err := NewSession(Config{Binary: writeArgvCLI(t, out), Workdir: dir, ExtraArgs: words,
						Remote: &Remote{Host: srv.Host, SSHOptions: srv.Options}}, "", false, 0)
					require.NoError(t, err)
					args := s.args(s.ID(), false)
					l, err := s.remoteLaunch(sshBin, args)
					require.NoError(t, err)
					cmd := exec.Command(l.bin, l.args...)
					cmd.Env, cmd.Stdin = l.env, bytes.NewReader(l.stdin)
					combined, err := cmd.CombinedOutput()
					assert.NoFileExists(t, pwned, "nothing ran over there but the CLI")
					require.NoError(t, err, "%s", combined)

					raw, err := os.ReadFile(out)
					require.NoError(t, err)
					got := strings.Split(string(raw), "\x00")
					assert.Equal(t, args, got[:len(got)-1], "the CLI's arguments, byte for byte")
					assert.Equal(t, dir+"\n", got[len(got)-1], "its directory")
				})
			}
		})
	}
}

package bridge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/transcript"
)

// Phone and terminal, one session (issue 26), through the whole stack with
// the real CLI. The daemon's [claude] binary is "claude", found on the
// PATH: claudetest's person's claude (PersonPATH), which runs the real CLI
// offline with the caller's HOME. So the footer's line can be run exactly
// as printed, in a shell, as a person whose own HOME is elsewhere.

// withPersonClaude makes "claude" on the daemon's PATH (and the person's)
// claudetest's person's claude, and the configured binary "claude".
func withPersonClaude(person *string) rigOption {
	return func(r *rig) {
		if r.claude == nil {
			r.claude = claudetest.New(r.t, script())
		}
		*person = r.claude.PersonPATH()
		r.t.Setenv("PATH", *person+":"+os.Getenv("PATH"))
		prev := r.mutate
		r.mutate = func(c *config.Config) {
			if prev != nil {
				prev(c)
			}
			c.Claude.Binary = "claude"
		}
	}
}

// footerLine is the resume line under an answer: its last line.
func footerLine(t *testing.T, m telegramtest.Message) string {
	t.Helper()
	lines := strings.Split(m.Text, "\n")
	line := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(line, "cd '") || strings.HasPrefix(line, "ssh -t "), "the answer ends with a resume line: %q", m.Text)
	return line
}

// typeAtTerminal runs line with sh -c exactly as it is, from another
// directory, as a person whose HOME is another directory, typing prompt on
// stdin (print mode: the CLI reads its prompt from stdin without a
// terminal), and returns what it printed.
func typeAtTerminal(t *testing.T, line, prompt string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir, cmd.Env = t.TempDir(), []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(prompt)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "sh -c %s: %s", line, stderr.String())
	return string(out)
}

// pidGone reports whether process pid has exited (or is a zombie).
func pidGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(stat), ") Z ")
}

// TestTerminalRoundTrip plays issue 26's whole round: the phone starts a
// session; its footer's line, run as printed in a shell, resumes it and
// adds a turn; the phone's next turn restarts the idle CLI and sends that
// turn to the model, saying so; 💻 Terminal sends the line alone and closes
// the chat's CLI, and the phone takes the session back with what the
// terminal added since; a session started at a terminal is listed in
// /sessions, marked 💻, and ▶️ resumes it.
func TestTerminalRoundTrip(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	var person string
	r := newRig(t, withPersonClaude(&person))
	dir := r.claude.Workdir

	// 1. The phone starts a session.
	first := r.ask(chat, "REMEMBER mango")
	id := r.sessionOf(key)
	line := footerLine(t, first)
	assert.Equal(t, "cd '"+dir+"' && env HOME='"+r.claude.Home+"' claude --resume "+id, line)
	assert.NotEmpty(t, buttonData(first, "💻 Terminal"), "and 💻 Terminal under it")
	status := r.command(chat, "/status", "Session status")
	assert.Contains(t, status.Text, "💻 At a terminal: "+line, "/status shows the line too")

	// 2. The line, run as printed, resumes the session and adds a turn.
	assert.Equal(t, "echo: TERMINAL what was the word?\n", typeAtTerminal(t, line, "TERMINAL what was the word?"))
	assert.True(t, r.callFor("TERMINAL what was the word?").AnyUserContains("REMEMBER mango"), "the terminal went on with the phone's conversation")

	// 3. The phone's next turn sees it: the idle CLI was restarted with
	// --resume, and the answer says what it picked up.
	before := r.b.ChatPID(key)
	require.NotZero(t, before, "the phone's CLI is still open, idle")
	back := r.ask(chat, "PHONE and now?")
	assert.True(t, r.callFor("PHONE and now?").AnyUserContains("TERMINAL what was the word?"), "the model was sent the terminal's turn")
	assert.Contains(t, back.Text, "💻 picked up 1 turn from the terminal")
	assert.Eventually(t, func() bool { return pidGone(before) }, wait, 20*time.Millisecond, "the stale CLI was closed")
	assert.Equal(t, id, r.sessionOf(key), "the same session, not a fork")
	again := r.ask(chat, "PHONE once more")
	assert.NotContains(t, again.Text, "picked up", "its own turns are not the terminal's")

	// 4. 💻 Terminal: the line alone, then the chat's CLI closes.
	live := r.b.ChatPID(key)
	require.NotZero(t, live)
	r.press(chat, again.ID, "💻 Terminal")
	alone := r.waitBot(chat, "the line alone", func(m telegramtest.Message) bool { return m.ReplyTo == again.ID && m.Text == line })
	assert.Equal(t, "code", alone.Entities[0].Type, "in a code entity, so a long press copies it")
	r.waitBot(chat, "the hand-over", func(m telegramtest.Message) bool {
		return m.Text == "💻 This session is yours at the terminal now; write here to take it back."
	})
	assert.Zero(t, r.b.ChatPID(key), "the chat has no CLI any more")
	assert.True(t, pidGone(live), "its process ended")
	assert.Equal(t, "echo: TERMINAL at the desk now\n", typeAtTerminal(t, line, "TERMINAL at the desk now"))
	taken := r.ask(chat, "PHONE taking it back")
	assert.True(t, r.callFor("PHONE taking it back").AnyUserContains("TERMINAL at the desk now"))
	assert.Contains(t, taken.Text, "💻 picked up 1 turn from the terminal")

	// 5. Sessions started at a terminal: a real interactive one (the
	// CLI's own transcript of one, in this directory) and a claude -p.
	interactive := plantInteractive(t, r.claude.Home, dir)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	printed, err := r.claude.Converse(ctx, "DESK a new idea")
	require.NoError(t, err)
	list := r.command(chat, "/sessions", "Started outside untether")
	assert.Contains(t, list.Text, "“DESK a new idea”")
	assert.Contains(t, list.Text, "💻 claude -p")
	assert.Contains(t, list.Text, "“hello from the terminal”")
	assert.Contains(t, list.Text, "💻 at a terminal")
	assert.Contains(t, list.Text, "💻 This chat's session at a terminal: "+line)
	r.press(chat, list.ID, "▶️ "+entryNumber(t, list.Text, "hello from the terminal"))
	r.waitBot(chat, "resumed", func(m telegramtest.Message) bool {
		return m.ID == list.ID && strings.Contains(m.Text, "continues session "+interactive+", started outside untether")
	})
	r.ask(chat, "PHONE what did I say at the desk?")
	assert.True(t, r.callFor("PHONE what did I say at the desk?").AnyUserContains("hello from the terminal"), "the terminal's conversation went on")
	assert.Equal(t, interactive, r.sessionOf(key))

	list = r.command(chat, "/sessions", "Started outside untether")
	r.press(chat, list.ID, "▶️ "+entryNumber(t, list.Text, "DESK a new idea"))
	r.waitBot(chat, "resumed", func(m telegramtest.Message) bool { return m.ID == list.ID && strings.Contains(m.Text, printed) })
	r.ask(chat, "PHONE and the idea?")
	assert.True(t, r.callFor("PHONE and the idea?").AnyUserContains("DESK a new idea"))
	assert.Equal(t, printed, r.sessionOf(key))
}

// entryNumber is the number of the /sessions entry that mentions text.
func entryNumber(t *testing.T, list, text string) string {
	t.Helper()
	for _, l := range strings.Split(list, "\n") {
		if n, rest, ok := strings.Cut(l, ". "); ok && strings.Contains(rest, text) {
			return n
		}
	}
	t.Fatalf("no entry with %q in %s", text, list)
	return ""
}

// plantInteractive puts the transcript a real interactive claude wrote
// (internal/transcript's fixture) among dir's sessions, as if that session
// had been started at a terminal there, and returns its id.
func plantInteractive(t *testing.T, home, dir string) string {
	t.Helper()
	const id = "4e1ce5b2-2191-4f8e-878a-4343a5fae631"
	raw, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "cli", "interactive.jsonl"))
	require.NoError(t, err)
	raw = []byte(strings.ReplaceAll(string(raw), "/home/dev/project", dir))
	path, err := transcript.Path(home, dir, id)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	old := time.Now().Add(-time.Minute) // before the phone's own
	require.NoError(t, os.Chtimes(path, old, old))
	return id
}

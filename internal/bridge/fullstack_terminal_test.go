package bridge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/sshtest"
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

// atTerminal is a claude a person runs at a terminal with the resume line,
// not a descendant of the test (the daemon): its shell is orphaned at
// once. It reads its prompt from a FIFO the test holds open, so it runs
// until typeAndExit ends the prompt. The prompt's first word is written at
// once: in print mode the CLI gives up on a stdin that stays silent for 3
// s ("no stdin data received in 3s"), but once data came it reads to the
// end.
type atTerminal struct {
	t    *testing.T
	in   *os.File
	out  string
	id   string
	pid  int // the terminal's claude, once settled
	done bool
}

func startAtTerminal(t *testing.T, line, id string) *atTerminal {
	t.Helper()
	dir := t.TempDir()
	fifo, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	// Read-write: opening it does not wait for a reader, and the CLI sees
	// the end of its input once the test closes it.
	in, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	sh := exec.Command("sh", "-c", "( "+line+" ) <'"+fifo+"' >'"+out+"' 2>&1 &")
	sh.Dir, sh.Env = t.TempDir(), []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	require.NoError(t, sh.Run())
	_, err = in.WriteString(promptStart)
	require.NoError(t, err)
	a := &atTerminal{t: t, in: in, out: out, id: id}
	t.Cleanup(a.kill)
	// The same pid in two scans in a row: while a starting process execs,
	// its command line reads empty and a scan passes it over, so one scan
	// that found it does not promise the next will (a test indexing a
	// later scan failed so, 1 run in many).
	require.Eventually(t, func() bool {
		found := a.found()
		seen := len(found) > 0 && found[0].PID == a.pid
		if len(found) > 0 {
			a.pid = found[0].PID
		} else {
			a.pid = 0
		}
		return seen
	}, wait, 20*time.Millisecond, "the terminal's claude runs")
	return a
}

// found lists the claude processes outside this test that run the session.
func (a *atTerminal) found() []runner.OutsideCLI {
	found, err := runner.FindOutside(runner.OutsideQuery{ID: runner.SessionID(a.id)})
	require.NoError(a.t, err)
	return found
}

// promptStart is what atTerminal types at once.
const promptStart = "TERMINAL"

// typeAndExit types the rest of the prompt and ends the input: the CLI
// answers and exits.
func (a *atTerminal) typeAndExit(rest string) {
	prompt := promptStart + rest
	_, err := a.in.WriteString(rest)
	require.NoError(a.t, err)
	require.NoError(a.t, a.in.Close())
	a.done = true
	require.Eventually(a.t, func() bool { return len(a.found()) == 0 }, wait, 20*time.Millisecond, "the terminal's claude exits")
	out, err := os.ReadFile(a.out)
	require.NoError(a.t, err)
	assert.Equal(a.t, "echo: "+prompt+"\n", string(out))
}

func (a *atTerminal) kill() {
	if !a.done {
		_ = a.in.Close()
	}
	for _, c := range a.found() {
		_ = syscall.Kill(c.PID, syscall.SIGKILL)
	}
}

// TestTerminalClaudeRunningWarns: while a claude outside untether runs the
// chat's session on this machine, a message from the phone is held and the
// chat asked first. ▶️ Continue anyway sends it; ⏳ Wait holds it (and one
// sent after it) until that claude exits, then sends them, with the turn
// it added picked up.
func TestTerminalClaudeRunningWarns(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	var person string
	r := newRig(t, withPersonClaude(&person))
	first := r.ask(chat, "REMEMBER papaya")
	id := r.sessionOf(key)
	desk := startAtTerminal(t, footerLine(t, first), id)
	pid := desk.pid

	asked := func(in telegramtest.Message) telegramtest.Message {
		t.Helper()
		q := r.waitBot(chat, "the question", func(m telegramtest.Message) bool {
			return m.ReplyTo == in.ID && strings.Contains(m.Text, "A claude outside untether runs this session") && buttonData(m, "⏳ Wait") != ""
		})
		assert.Contains(t, q.Text, "pid "+strconv.Itoa(pid)+" with --resume")
		return q
	}
	in := r.say(chat, alice, "PHONE while the desk is open")
	q := asked(in)
	assert.Zero(t, r.callsWith("PHONE while the desk is open"), "held: not sent to Claude")
	r.press(chat, q.ID, "▶️ Continue anyway")
	r.waitBot(chat, "sent anyway", func(m telegramtest.Message) bool {
		return m.ID == q.ID && strings.HasPrefix(m.Text, "▶️ Sent anyway") && len(m.Keyboard) == 0
	})
	r.finalAnswer(chat, in.ID, "echo: PHONE while the desk is open")

	second := r.say(chat, alice, "PHONE second")
	q = asked(second)
	third := r.say(chat, alice, "PHONE third")
	r.waitBot(chat, "held too", func(m telegramtest.Message) bool {
		return m.ReplyTo == third.ID && strings.HasPrefix(m.Text, "⏸ Held too")
	})
	r.press(chat, q.ID, "⏳ Wait")
	r.waitBot(chat, "waiting", func(m telegramtest.Message) bool {
		return m.ID == q.ID && strings.HasPrefix(m.Text, "⏳ Waiting for the claude outside untether to exit") && buttonData(m, "▶️ Continue anyway") != ""
	})
	time.Sleep(3 * outsidePoll) // the watcher looks and finds it still there
	assert.Zero(t, r.callsWith("PHONE second"))
	assert.Zero(t, r.callsWith("PHONE third"))

	still := desk.found()
	require.Len(t, still, 1, "the terminal's claude ran all along")
	require.Equal(t, pid, still[0].PID)
	desk.typeAndExit(" typed at the desk")
	r.waitBot(chat, "released", func(m telegramtest.Message) bool {
		return m.ID == q.ID && strings.HasPrefix(m.Text, "✅ The claude outside untether has exited")
	})
	answer := r.finalAnswer(chat, second.ID, "echo: PHONE second")
	assert.Contains(t, answer.Text, "💻 picked up 1 turn from the terminal")
	assert.True(t, r.callFor("PHONE second").AnyUserContains("TERMINAL typed at the desk"), "the model was sent the terminal's turn")
	r.finalAnswer(chat, third.ID, "echo: PHONE third")
	assert.True(t, r.callFor("PHONE third").AnyUserContains("PHONE second"), "in order")
}

// TestTerminalHeldMessageSurvivesARestart: a message held while a claude
// outside untether runs the session is not lost when untether restarts:
// the next start hands it in again, asks again (that claude still runs),
// and ▶️ Continue anyway then sends it, once.
func TestTerminalHeldMessageSurvivesARestart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	var person string
	r := newRig(t, withPersonClaude(&person))
	first := r.ask(chat, "REMEMBER kiwi")
	desk := startAtTerminal(t, footerLine(t, first), r.sessionOf(key))
	defer desk.kill()

	in := r.say(chat, alice, "PHONE held over a restart")
	question := func(not telegramtest.MessageID) telegramtest.Message {
		t.Helper()
		return r.waitBot(chat, "the question", func(m telegramtest.Message) bool {
			return m.ID != not && m.ReplyTo == in.ID && strings.Contains(m.Text, "A claude outside untether runs this session") &&
				buttonData(m, "▶️ Continue anyway") != ""
		})
	}
	q := question(0)
	r.stop()
	r.start()
	again := question(q.ID)
	assert.Zero(t, r.callsWith("PHONE held over a restart"), "still held: not sent to Claude")
	r.press(chat, again.ID, "▶️ Continue anyway")
	r.finalAnswer(chat, in.ID, "echo: PHONE held over a restart")
	assert.Equal(t, 1, r.callsWith("PHONE held over a restart"), "sent once")
}

// outsidePoll is how often the places module looks again for the claude a
// ⏳ Wait waits for (its outsidePoll).
const outsidePoll = time.Second

// TestTerminalSessionsInAGroup: /sessions offers a session started at a
// terminal only in a private chat; a group sees its own sessions and is
// told why the others are not there, and no chat is offered another
// chat's session.
func TestTerminalSessionsInAGroup(t *testing.T) {
	private := telegramtest.ChatID(alice)
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	r.ask(team, "GROUP own words")
	r.ask(private, "PRIVATE own words")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := r.claude.Converse(ctx, "DESK outside words")
	require.NoError(t, err)

	group := r.command(team, "/sessions", "Sessions")
	assert.Contains(t, group.Text, "GROUP own words")
	assert.NotContains(t, group.Text, "DESK outside words")
	assert.NotContains(t, group.Text, "PRIVATE own words")
	assert.NotContains(t, group.Text, "Started outside untether")
	assert.Contains(t, group.Text, "Sessions started outside untether in "+r.claude.Workdir+" are offered only in a private chat with me")
	assert.Len(t, group.Keyboard, 1, "one ▶️, the group's own session")

	mine := r.command(private, "/sessions", "Started outside untether")
	assert.Contains(t, mine.Text, "PRIVATE own words")
	assert.Contains(t, mine.Text, "“DESK outside words”")
	assert.NotContains(t, mine.Text, "GROUP own words", "another chat's session is not offered")
}

// TestTerminalRemoteProjectIsNotChecked: for a project on another host (a
// real sshd on 127.0.0.1) the line is ssh's, and untether says plainly
// what it cannot check there. A turn typed over there while the phone's
// CLI is open is not seen by the phone's next turn, as the hand-over says;
// after 💻 Terminal closed it, the phone's next turn resumes with what the
// terminal wrote.
func TestTerminalRemoteProjectIsNotChecked(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	srv := sshtest.Start(t)
	far := realDir(t)
	r := newRig(t, func(r *rig) {
		r.claude = claudetest.New(r.t, script())
		// The other host's claude: the person's, by its absolute path
		// (sshd's PATH is its own), so the line runs there as printed.
		bin := filepath.Join(r.claude.PersonPATH(), "claude")
		r.mutate = func(c *config.Config) {
			c.Projects = map[string]config.Project{"far": {Path: far, Host: srv.Host, SSHOptions: srv.Options, Binary: bin}}
			c.Telegram.DefaultProject = "far"
		}
	})

	first := r.ask(chat, "REMEMBER far words")
	id := r.sessionOf(key)
	line := footerLine(t, first)
	assert.True(t, strings.HasPrefix(line, "ssh -t "+strings.Join(srv.Options, " ")+" "+srv.Host+" \"cd '"+far+"' && env HOME='"+r.claude.Home+"' "), line)
	assert.True(t, strings.HasSuffix(line, " --resume "+id+"\""), line)

	assert.Equal(t, "echo: TERMINAL far typed\n", typeAtTerminal(t, line, "TERMINAL far typed"))
	next := r.ask(chat, "PHONE far next")
	assert.False(t, r.callFor("PHONE far next").AnyUserContains("TERMINAL far typed"), "the open CLI went on from its own copy: not checked")
	assert.NotContains(t, next.Text, "picked up")

	r.press(chat, next.ID, "💻 Terminal")
	r.waitBot(chat, "the line alone", func(m telegramtest.Message) bool { return m.ReplyTo == next.ID && m.Text == line })
	yours := r.waitBot(chat, "the hand-over", func(m telegramtest.Message) bool {
		return strings.HasPrefix(m.Text, "💻 This session is yours at the terminal now; write here to take it back.")
	})
	assert.Contains(t, yours.Text, "It runs on "+srv.Host+", where untether cannot look: it does not warn you when a claude there runs this session, "+
		"and does not notice turns typed there while its own Claude is open.")
	require.Eventually(t, func() bool { pid, _ := remoteCLI(t, r.claude.Binary, id); return pid == 0 }, wait, 20*time.Millisecond,
		"the CLI over there ended")

	assert.Equal(t, "echo: TERMINAL far again\n", typeAtTerminal(t, line, "TERMINAL far again"))
	back := r.ask(chat, "PHONE far back")
	assert.True(t, r.callFor("PHONE far back").AnyUserContains("TERMINAL far again"), "resumed with what the terminal wrote")
	assert.NotContains(t, back.Text, "picked up")

	// A session started at a terminal over there (this machine's directory
	// far, as the test's other host) is not listed: untether cannot look.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	there := *r.claude
	there.Workdir = far
	_, err := there.Converse(ctx, "DESK far outside")
	require.NoError(t, err)
	list := r.command(chat, "/sessions", "Sessions")
	assert.NotContains(t, list.Text, "DESK far outside")
	assert.Contains(t, list.Text, "💻 Sessions started at a terminal on "+srv.Host+" are not listed: untether cannot read the transcripts there.")
}

// TestTerminalButtonWhileBusyAndOnAnEarlierSession: 💻 Terminal pressed
// while a turn runs closes the chat's CLI only once the turn is over; on
// an answer of an earlier session it sends that session's line and closes
// nothing.
func TestTerminalButtonWhileBusyAndOnAnEarlierSession(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) { c.Progress.Drafts = false }))
	first := r.ask(chat, "hello")
	id := r.sessionOf(key)

	in := r.say(chat, alice, "STEADY please")
	r.waitBot(chat, "progress", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	r.press(chat, first.ID, "💻 Terminal")
	r.waitBot(chat, "the line alone", func(m telegramtest.Message) bool { return m.ReplyTo == first.ID && m.Text == footerLine(t, first) })
	r.waitBot(chat, "closes after the turn", func(m telegramtest.Message) bool {
		return m.Text == "💻 Claude here closes this session once its turn is over; then it is yours at the terminal."
	})
	live := r.b.ChatPID(key)
	require.NotZero(t, live, "still open while the turn runs")
	steady := r.finalAnswer(chat, in.ID, "steady words")
	assert.NotContains(t, steady.Text, "Stopped", "the turn was not cut off")
	r.waitBot(chat, "the hand-over", func(m telegramtest.Message) bool {
		return m.Text == "💻 This session is yours at the terminal now; write here to take it back."
	})
	assert.Zero(t, r.b.ChatPID(key))
	assert.True(t, pidGone(live))

	r.command(chat, "/new", "New session")
	r.ask(chat, "a new one")
	require.NotEqual(t, id, r.sessionOf(key))
	live = r.b.ChatPID(key)
	r.press(chat, first.ID, "💻 Terminal")
	r.waitBot(chat, "the earlier session", func(m telegramtest.Message) bool {
		return strings.HasPrefix(m.Text, "💻 That is an earlier session of this chat: the command above goes on with it at a terminal.")
	})
	assert.Equal(t, live, r.b.ChatPID(key), "the chat's CLI of its current session is left alone")
}

// TestTerminalPickupInWorktreeAfterResumeAndContinue: the pickup reads
// the transcript of the session where it runs: a git worktree's (its own
// directory, so its own transcripts), a session taken back with ▶️ Resume,
// and one /continue took from a terminal.
func TestTerminalPickupInWorktreeAfterResumeAndContinue(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	repo := gitRepo(t)
	var person string
	r := newRig(t, withPersonClaude(&person), withProjects(map[string]config.Project{"repo": {Path: repo}}, func(c *config.Config) {
		c.Telegram.DefaultProject = "repo"
		c.Claude.Binary = "claude"
	}))
	wt := filepath.Join(repo, ".worktrees", "fix")
	r.command(chat, "/branch fix", "Made the worktree fix")
	first := r.ask(chat, "WT first")
	id := r.sessionOf(key)
	line := footerLine(t, first)
	assert.True(t, strings.HasPrefix(line, "cd '"+wt+"' && "), line)
	assert.Equal(t, "echo: TERMINAL in the worktree\n", typeAtTerminal(t, line, "TERMINAL in the worktree"))
	picked := r.ask(chat, "WT phone again")
	assert.Contains(t, picked.Text, "💻 picked up 1 turn from the terminal")
	assert.True(t, r.callFor("WT phone again").AnyUserContains("TERMINAL in the worktree"))

	// ▶️ Resume: another session meanwhile, then the worktree's again.
	r.command(chat, "/new", "New session")
	r.ask(chat, "WT another")
	list := r.command(chat, "/sessions", "Sessions")
	r.press(chat, list.ID, "▶️ "+entryNumber(t, list.Text, "WT first"))
	r.waitBot(chat, "resumed", func(m telegramtest.Message) bool { return m.ID == list.ID && strings.Contains(m.Text, "Resuming") })
	r.ask(chat, "WT resumed")
	require.Equal(t, id, r.sessionOf(key))
	assert.Equal(t, "echo: TERMINAL after the resume\n", typeAtTerminal(t, line, "TERMINAL after the resume"))
	picked = r.ask(chat, "WT after the resume")
	assert.Contains(t, picked.Text, "💻 picked up 1 turn from the terminal")
	assert.True(t, r.callFor("WT after the resume").AnyUserContains("TERMINAL after the resume"))

	// /continue: the latest session in the worktree, started at a
	// terminal there.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	desk := *r.claude
	desk.Workdir = wt
	outside, err := desk.Converse(ctx, "DESK in the worktree")
	require.NoError(t, err)
	r.command(chat, "/continue", "started outside untether")
	cont := r.ask(chat, "WT continued")
	require.Equal(t, outside, r.sessionOf(key))
	assert.Equal(t, "echo: TERMINAL after the continue\n", typeAtTerminal(t, footerLine(t, cont), "TERMINAL after the continue"))
	picked = r.ask(chat, "WT after the continue")
	assert.Contains(t, picked.Text, "💻 picked up 1 turn from the terminal")
	assert.True(t, r.callFor("WT after the continue").AnyUserContains("TERMINAL after the continue"))
}

// TestTerminalLineOffInAnswers: with [render] show_resume_line off, an
// answer has neither the line nor 💻 Terminal; /status still shows the
// line.
func TestTerminalLineOffInAnswers(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Render.ShowResumeLine = false }))
	answer := r.ask(chat, "hello")
	assert.Empty(t, answer.Keyboard)
	assert.NotContains(t, answer.Text, "--resume")
	status := r.command(chat, "/status", "Session status")
	assert.Contains(t, status.Text, "💻 At a terminal: "+r.resumeLine(r.claude.Workdir, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)})))
}

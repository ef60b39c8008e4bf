package main

import (
	"context"
	"database/sql"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // to check the state database's integrity from outside

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// These tests run real turns: the daemon starts the pinned Claude CLI, which
// talks to the fake Anthropic API in this process.

// slowAnswer streams for about 7 s (90 deltas of ~40 bytes, 75 ms apart):
// long enough to still run when the test's SIGTERM lands on a loaded
// machine, short enough to end well within the drain_timeout the drain
// tests give it. It ends with a marker, so a truncated answer shows, and
// fits one Telegram message.
var slowAnswer = strings.Repeat("slow answer ", 300) + "THE-END"

func script() fakeapi.Script {
	return fakeapi.Script{Rules: append(escapeTurn(), []fakeapi.Rule{
		{Name: "slow", When: fakeapi.Match{PromptContains: "SLOWDRAIN"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(slowAnswer)}, ChunkDelayMs: 75}}},
		// A turn that never ends by itself: only an interrupt stops it.
		{Name: "hang", When: fakeapi.Match{PromptContains: "HANGFOREVER"}, Replies: []fakeapi.Reply{fakeapi.Hang()}},
		{Name: "bash-after", When: fakeapi.Match{AnyUserContains: "BASHRUN", LastIsToolResult: fakeapi.Bool(true)},
			Replies: []fakeapi.Reply{fakeapi.Text("The command ran.")}},
		{Name: "bash", When: fakeapi.Match{PromptContains: "BASHRUN", LastIsToolResult: fakeapi.Bool(false)},
			Replies: []fakeapi.Reply{fakeapi.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"})}},
	}...)}
}

// withClaude points the installation at the real CLI and a fake API.
func (d *daemon) withClaude() *claudetest.Env {
	d.t.Helper()
	env := claudetest.New(d.t, script())
	d.cfg.Binary, d.cfg.Workdir, d.cfg.Home = env.Binary, env.Workdir, env.Home
	vars := maps.Clone(env.Vars)
	delete(vars, "HOME") // claude.home sets it; claude.env may not
	d.cfg.Env = vars
	// Runs before claudetest's cleanup, after the daemon's: whatever a
	// failed test left in the workdir is killed.
	d.t.Cleanup(func() { killProcessesIn(d.t, env.Workdir) })
	return env
}

// cliProcesses lists the live Claude CLI processes working in the test's
// workdir.
func cliProcesses(t *testing.T, env *claudetest.Env) []procInfo {
	t.Helper()
	exe, err := filepath.EvalSymlinks(env.Binary)
	require.NoError(t, err)
	var out []procInfo
	for _, p := range processesIn(t, env.Workdir) {
		if p.exe == exe {
			out = append(out, p)
		}
	}
	return out
}

// requireNothingLeft asserts no process works in the workdir any more: not
// the CLI, not anything its tools started.
func requireNothingLeft(t *testing.T, env *claudetest.Env, during []procInfo) {
	t.Helper()
	require.NotEmpty(t, during, "the CLI was found while the turn ran (else this check proves nothing)")
	assert.Empty(t, processesIn(t, env.Workdir), "no CLI process outlives the daemon")
}

// callCount is how many Bot API calls the fake has seen so far; calls with
// a higher Seq came later.
func callCount(tg *telegramtest.Server) int { return len(tg.Snapshot().Calls) }

// sentAfter reports whether the bot sent m (a message never edited since)
// after the first `after` calls.
func sentAfter(tg *telegramtest.Server, m telegramtest.Message, after int) bool {
	for _, c := range tg.Snapshot().CallsOf("sendMessage") {
		if c.Seq > after && c.OK() && c.Params["text"] == m.Raw {
			return true
		}
	}
	return false
}

// TestDrainDeliversRunningTurn: SIGTERM while a turn streams lets the turn
// finish; its whole answer reaches the chat before the daemon exits 0, and
// no CLI is left running.
func TestDrainDeliversRunningTurn(t *testing.T) {
	t.Parallel()
	testDrainDelivers(t, "10s")
}

// TestDrainOutlastsStopTimeout: drain_timeout, not the per-step
// stop_timeout, bounds how long a running turn may go on.
func TestDrainOutlastsStopTimeout(t *testing.T) {
	t.Parallel()
	testDrainDelivers(t, "2s")
}

func testDrainDelivers(t *testing.T, stopTimeout string) {
	d := newDaemon(t)
	claude := d.withClaude()
	d.cfg.DrainTimeout = "1m"
	d.cfg.StopTimeout = stopTimeout
	sock := d.withNotify()
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	in := d.say(alice, "SLOWDRAIN please")
	// The answer streams as a draft (a private chat); the progress message
	// shows the turn running.
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		dr, ok := sn.ShownDraft(chat, 0)
		return ok && strings.Contains(dr.Text, "slow answer")
	})
	d.waitBot(chat, "progress message", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	sock.waitFor("STATUS= with the running turn", func(m string) bool {
		return m == "STATUS=1 chats, 1 running turns, 0 pending approvals"
	})
	during := cliProcesses(t, claude)
	before := callCount(d.tg)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())

	sn := d.tg.Snapshot()
	var final *telegramtest.Message
	for _, m := range sn.BotMessages(chat) {
		if isFinal(m, in.ID) && strings.Contains(m.Text, "THE-END") {
			final = &m
		}
	}
	require.NotNil(t, final, "the whole answer was delivered before exit; chat:%s", dumpChat(sn, chat))
	assert.NotContains(t, final.Text, "Stopped", "the turn was not interrupted")
	assert.True(t, sentAfter(d.tg, *final, before), "the answer was sent during the drain, not before the signal")
	requireNothingLeft(t, claude, during)
	p.waitLog("the drain start", msgIs("stopping: finishing running turns (send the signal again to stop at once)"))
	p.waitLog("the clean stop", msgIs("untether stopped"))
}

// TestDrainTimeoutInterruptsTurn: a turn still running when drain_timeout
// ends is interrupted, the user is told so ("Stopped for a restart."), the CLI is closed
// and the daemon exits 0.
func TestDrainTimeoutInterruptsTurn(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	d.cfg.DrainTimeout = "2s"
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	in := d.say(alice, "HANGFOREVER please")
	waitModelCall(t, claude, "HANGFOREVER")
	during := cliProcesses(t, claude)
	before := callCount(d.tg)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())

	sn := d.tg.Snapshot()
	var stopped *telegramtest.Message
	for _, m := range sn.BotMessages(chat) {
		if m.ReplyTo == in.ID && strings.Contains(m.Text, "Stopped for a restart.") {
			stopped = &m
		}
	}
	require.NotNil(t, stopped, "the user was told the turn was interrupted; chat:%s", dumpChat(sn, chat))
	assert.True(t, sentAfter(d.tg, *stopped, before))
	for _, m := range sn.BotMessages(chat) {
		assert.True(t, answerKeyboard(m), "no message keeps buttons nobody can answer: %q", m.Text)
	}
	requireNothingLeft(t, claude, during)
}

// waitModelCall waits until the CLI sent the prompt to the fake API, i.e.
// the turn is running.
func waitModelCall(t *testing.T, claude *claudetest.Env, prompt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := claude.API.WaitFor(ctx, func(reqs []fakeapi.Request) bool {
		for _, r := range reqs {
			if r.LastPrompt() != "" && strings.Contains(r.LastPrompt(), prompt) {
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "the CLI never asked the model about %q", prompt)
}

// TestSecondSignalForcesExit: during a drain that would take ten minutes, a
// second SIGTERM interrupts the turn at once; the state database is intact
// and recorded the handled update.
func TestSecondSignalForcesExit(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	d.cfg.DrainTimeout = "10m" // far beyond `wait`: only the second signal can end this drain in time
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	in := d.say(alice, "HANGFOREVER please")
	waitModelCall(t, claude, "HANGFOREVER")
	during := cliProcesses(t, claude)
	p.signal(syscall.SIGTERM)
	p.waitLog("the drain start", msgIs("stopping: finishing running turns (send the signal again to stop at once)"))
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
	p.waitLog("the forced stop", msgIs("second signal: interrupting running turns now"))
	d.waitBot(chat, "the interruption notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Stopped for a restart.")
	})
	requireNothingLeft(t, claude, during)

	// The database survived: SQLite finds no corruption, and the next
	// start's view of it is consistent (the handled update is recorded, so
	// it will not be run again).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(d.cfg.StateDir, state.FileName)+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var check string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&check))
	assert.Equal(t, "ok", check)
	st, err := state.Open(context.Background(), d.cfg.StateDir)
	require.NoError(t, err)
	defer st.Close()
	last, err := st.LastUpdateID(context.Background())
	require.NoError(t, err)
	assert.Positive(t, last, "the handled message's update id was persisted")
	live, err := st.ListLive(context.Background())
	require.NoError(t, err)
	assert.Empty(t, live, "no progress message is left for the next start to clean up")
}

// TestReloadOnSIGHUP: a user added to allowed_user_ids is served after
// SIGHUP; a broken file is refused and the running config kept; a changed
// restart-only key is named in the log.
func TestReloadOnSIGHUP(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.withClaude()
	p := d.start()
	d.waitReady(p)

	d.say(bob, "hello from bob")
	p.waitLog("that Bob was turned away", func(l logLine) bool {
		return l.str("message") == "ignoring a message from a user not allowed" && l.num("user_id") == int64(bob)
	})

	// A broken file is not applied, and the daemon keeps running.
	require.NoError(t, os.WriteFile(d.cfgPath, []byte("[telegram\n"), 0o600))
	p.signal(syscall.SIGHUP)
	p.waitLog("the refused reload", msgIs("reload: keeping the running configuration"))

	d.cfg.Users = []int64{int64(alice), int64(bob)}
	d.cfg.MaxRows = 5        // reloadable
	d.cfg.PollTimeout = "3s" // needs a restart
	d.writeConfig()
	p.signal(syscall.SIGHUP)
	reloaded := p.waitLog("the reload", msgIs("configuration reloaded"))
	assert.ElementsMatch(t, []string{"telegram.allowed_user_ids", "progress.max_rows"}, reloaded.strs("applied"))
	assert.Equal(t, []string{"telegram.poll_timeout"}, reloaded.strs("need_restart"))

	in := d.say(bob, "hello again from bob")
	d.waitBot(telegramtest.ChatID(bob), "an answer to Bob", func(m telegramtest.Message) bool {
		return isFinal(m, in.ID) && strings.Contains(m.Text, "echo: hello again from bob")
	})
	for _, m := range d.tg.Snapshot().BotMessages(telegramtest.ChatID(bob)) {
		assert.NotContains(t, m.Text, "hello from bob", "the message sent before the reload stays unanswered")
	}
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// TestTokenNeverLeaks runs a full session the way systemd would start it
// (token in the environment, debug logging, a flaky network whose errors
// carry request URLs) and then looks for the token everywhere the daemon
// writes: its log, its state dir, and the CLI's environment.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	token := d.tg.Token()
	d.cfg.Token = "" // from UNTETHER_TELEGRAM_BOT_TOKEN, as with EnvironmentFile=
	d.cfg.LogLevel = "debug"
	d.env = append(d.env, "UNTETHER_TELEGRAM_BOT_TOKEN="+token)
	sock := d.withNotify()
	// An error whose text holds the token, as from a proxy that echoes the
	// request URL: the daemon logs failed polls, and must blank it out.
	// (go-telegram/bot masks the token in its own URL errors.)
	d.tg.FailNext("getUpdates", 1, http.StatusBadGateway, "Bad Gateway: upstream /bot"+token+"/getUpdates timed out", 0)
	d.tg.DropConnection("getUpdates", 1)
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	in := d.say(alice, "BASHRUN please")
	ap := d.waitBot(chat, "approval", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo hi > out.txt") && buttonData(m, "Approve") != ""
	})
	sock.waitFor("STATUS= with the pending approval", func(m string) bool {
		return m == "STATUS=1 chats, 1 running turns, 1 pending approvals"
	})
	during := cliProcesses(t, claude)
	require.NotEmpty(t, during)
	for _, c := range during {
		environ, err := os.ReadFile(filepath.Join("/proc", itoa(c.pid), "environ"))
		require.NoError(t, err)
		assert.NotContains(t, string(environ), token, "the CLI's environment does not hold the token")
		assert.NotContains(t, string(environ), "UNTETHER_TELEGRAM_BOT_TOKEN")
	}
	d.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	d.waitBot(chat, "final answer", func(m telegramtest.Message) bool {
		return isFinal(m, in.ID) && strings.Contains(m.Text, "The command ran.")
	})
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())

	logs := p.stderr.String()
	assert.NotContains(t, logs, token, "the log never holds the token")
	assert.Contains(t, logs, "[redacted]", "a log line that would have held the token was redacted (else nothing was tested)")
	assert.Contains(t, logs, `"level":"debug"`, "debug logging was on")
	var files int
	require.NoError(t, filepath.WalkDir(d.cfg.StateDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, string(data), token, "%s does not hold the token", path)
		return nil
	}))
	assert.Positive(t, files, "the state dir was written")
	requireNothingLeft(t, claude, during)
}

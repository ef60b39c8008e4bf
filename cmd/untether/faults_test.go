package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
)

// The fault suite (issue 14 §5): each scenario runs the built daemon
// against the fake Bot API and the real CLI, injects one fault a daemon
// meets in its life, and checks three things: nothing the user must see is
// lost, nothing is sent twice, and how long recovery took. Recovery times
// are logged as "recovery <scenario>: <duration>" (figures for
// BENCHMARKS.md), never asserted: a loaded CI machine must not fail them.

// logRecovery reports a recovery time in the form BENCHMARKS.md collects.
func logRecovery(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("recovery %s: %v", what, d.Round(10*time.Millisecond))
}

// requireSentOnce fails if the bot sent any message twice: two successful
// sendMessage calls with the same text replying to the same message.
func requireSentOnce(t *testing.T, tg *telegramtest.Server, chat telegramtest.ChatID) {
	t.Helper()
	seen := map[string]int{}
	for _, c := range tg.Snapshot().CallsOf("sendMessage") {
		if c.Chat == chat && c.OK() {
			seen[c.Params["reply_parameters"]+"\x00"+c.Params["text"]]++
		}
	}
	for k, n := range seen {
		_, text, _ := strings.Cut(k, "\x00")
		assert.Equal(t, 1, n, "sent %d times: %.120q", n, text)
	}
}

// finalsTo counts the final answers to a user message the chat shows.
func finalsTo(tg *telegramtest.Server, chat telegramtest.ChatID, to telegramtest.MessageID) int {
	n := 0
	for _, m := range tg.Snapshot().BotMessages(chat) {
		if isFinal(m, to) {
			n++
		}
	}
	return n
}

// TestFault502Storm: Telegram answers every call with 502 while a turn
// finishes; once it is back the answer arrives, once.
func TestFault502Storm(t *testing.T) {
	t.Parallel()
	testOutage(t, "502 storm", telegramtest.Fault{Code: http.StatusBadGateway, Description: "Bad Gateway"}, 10*time.Second)
}

// TestFaultConnectionDrops: every connection to Telegram is dropped
// without a response while a turn finishes.
func TestFaultConnectionDrops(t *testing.T) {
	t.Parallel()
	testOutage(t, "connection drops", telegramtest.Fault{Drop: true}, 5*time.Second)
}

// testOutage fails every Bot API call with f from the moment a streaming
// turn shows its progress until at least outage has passed and the bot
// has tried to send the finished answer; then measures how long the
// answer takes to show once Telegram is back.
func testOutage(t *testing.T, name string, f telegramtest.Fault, outage time.Duration) {
	d := newDaemon(t)
	d.withClaude()
	p := d.start()
	d.waitReady(p)
	chat := telegramtest.ChatID(alice)

	in := d.say(alice, "SLOWDRAIN please")
	waitStreaming(d.tg, "slow answer")
	stop := d.tg.FailWhen(func(telegramtest.Call) bool { return true }, f)
	began, faulted := time.Now(), callCount(d.tg)
	// The answer is ready and the bot has tried to send it: from here on
	// only Telegram holds it back. (Every call after the fault fails.)
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		for _, c := range sn.CallsOf("sendMessage") {
			if c.Seq > faulted && strings.Contains(c.Params["text"], "THE-END") {
				return true
			}
		}
		return false
	})
	if left := outage - time.Since(began); left > 0 {
		<-time.After(left) // the outage's length is the scenario, not a wait for a condition
	}
	stop()
	back := time.Now()
	d.waitBot(chat, "the answer", func(m telegramtest.Message) bool { return isFinal(m, in.ID) && strings.Contains(m.Text, "THE-END") })
	logRecovery(t, fmt.Sprintf("%s (%v outage)", name, time.Since(began).Round(time.Second)), time.Since(back))
	failed := 0
	for _, c := range d.tg.Snapshot().Calls {
		if !c.OK() {
			failed++
		}
	}
	t.Logf("%d Bot API calls failed during the outage", failed)
	assert.Equal(t, 1, finalsTo(d.tg, chat, in.ID), "the answer shows once")
	requireSentOnce(t, d.tg, chat)
	in2 := d.say(alice, "after the outage")
	d.waitBot(chat, "an answer after the outage", func(m telegramtest.Message) bool { return isFinal(m, in2.ID) })
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// waitStreaming waits until the bot has shown text of a running turn: in
// a draft (private chats) or its progress message.
func waitStreaming(tg *telegramtest.Server, text string) {
	tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		for _, c := range sn.Calls {
			if (c.Method == "sendMessageDraft" || c.Method == "editMessageText") && c.OK() && strings.Contains(c.Params["text"], text) {
				return true
			}
		}
		return false
	})
}

// botMethods are the Bot API methods the daemon calls.
var botMethods = []string{"getMe", "getUpdates", "setMyCommands", "sendMessage", "sendMessageDraft", "editMessageText",
	"editMessageReplyMarkup", "deleteMessage", "sendChatAction", "answerCallbackQuery", "sendDocument", "getFile"}

// TestFaultSlowTelegram: every Bot API call takes 10 s. A message is still
// answered, once; when Telegram is fast again so is the bot.
func TestFaultSlowTelegram(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.withClaude()
	p := d.start()
	d.waitReady(p)
	chat := telegramtest.ChatID(alice)

	for _, m := range botMethods {
		d.tg.Delay(m, 10*time.Second)
	}
	sent := time.Now()
	in := d.say(alice, "hello slow Telegram")
	d.waitBot(chat, "the answer", func(m telegramtest.Message) bool { return isFinal(m, in.ID) })
	t.Logf("answer shown %v after the message, every call taking 10 s", time.Since(sent).Round(10*time.Millisecond))
	for _, m := range botMethods {
		d.tg.Delay(m, 0)
	}
	fast := time.Now()
	in2 := d.say(alice, "hello fast Telegram")
	d.waitBot(chat, "the next answer", func(m telegramtest.Message) bool { return isFinal(m, in2.ID) })
	logRecovery(t, "slow Telegram (next answer once calls are fast again)", time.Since(fast))
	assert.Equal(t, 1, finalsTo(d.tg, chat, in.ID))
	assert.Equal(t, 1, finalsTo(d.tg, chat, in2.ID))
	requireSentOnce(t, d.tg, chat)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// TestFaultSIGKILLDaemon: the daemon is SIGKILLed mid-turn. Its CLIs die
// with it; a message written while it is down is answered exactly once
// after the restart, and the interrupted turn's progress message says so.
func TestFaultSIGKILLDaemon(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	p := d.start()
	d.waitReady(p)
	chat := telegramtest.ChatID(alice)

	in := d.say(alice, "HANGFOREVER please")
	prog := d.waitBot(chat, "the progress message", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && buttonData(m, "Cancel") != ""
	})
	waitModelCall(t, claude, "HANGFOREVER")
	require.NotEmpty(t, cliProcesses(t, claude))
	p.signal(syscall.SIGKILL)
	killed := time.Now()
	require.Equal(t, 128+int(syscall.SIGKILL), p.waitExit())
	for len(cliProcesses(t, claude)) > 0 && time.Since(killed) < wait {
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("every CLI was gone %v after the daemon's SIGKILL", time.Since(killed).Round(time.Millisecond))
	require.Empty(t, cliProcesses(t, claude))

	down := d.say(alice, "written while it was down")
	p = d.start()
	restarted := time.Now()
	d.waitBot(chat, "the answer to the message written while down", func(m telegramtest.Message) bool { return isFinal(m, down.ID) })
	logRecovery(t, "SIGKILL of the daemon (restart to the answer of a message written while down)", time.Since(restarted))
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		m, _ := sn.Message(chat, prog.ID)
		return strings.Contains(m.Text, "Interrupted") && len(m.Keyboard) == 0
	})
	assert.Equal(t, 1, finalsTo(d.tg, chat, down.ID), "answered exactly once")
	assert.Zero(t, finalsTo(d.tg, chat, in.ID), "the interrupted turn is not run again")
	requireSentOnce(t, d.tg, chat)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// TestFaultSIGKILLCLI: the CLI is SIGKILLed mid-turn (the OOM killer's
// favourite). The user is told, and the next message resumes the session.
func TestFaultSIGKILLCLI(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	p := d.start()
	d.waitReady(p)
	chat := telegramtest.ChatID(alice)

	in := d.say(alice, "HANGFOREVER please")
	waitModelCall(t, claude, "HANGFOREVER")
	clis := cliProcesses(t, claude)
	require.Len(t, clis, 1)
	require.NoError(t, syscall.Kill(clis[0].pid, syscall.SIGKILL))
	killed := time.Now()
	d.waitBot(chat, "the crash notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Claude stopped unexpectedly")
	})
	logRecovery(t, "SIGKILL of a CLI (to the notice)", time.Since(killed))
	next := time.Now()
	in2 := d.say(alice, "are you back")
	d.waitBot(chat, "the next answer", func(m telegramtest.Message) bool {
		return isFinal(m, in2.ID) && strings.Contains(m.Text, "echo: are you back")
	})
	logRecovery(t, "SIGKILL of a CLI (next message to its answer, new CLI)", time.Since(next))
	requireSentOnce(t, d.tg, chat)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// TestFaultMissingBinary: the CLI binary vanishes while the daemon runs.
// A chat that needs a new CLI is told so, naming the path; the daemon
// stays up and a live CLI keeps serving its chat; the first message after
// the binary is back is answered.
func TestFaultMissingBinary(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	link := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.Symlink(claude.Binary, link))
	d.cfg.Binary = link
	d.cfg.Users = []int64{int64(alice), int64(bob)}
	p := d.start()
	d.waitReady(p)
	a, b := telegramtest.ChatID(alice), telegramtest.ChatID(bob)

	in := d.say(alice, "first")
	d.waitBot(a, "alice's answer", func(m telegramtest.Message) bool { return isFinal(m, in.ID) })
	require.NoError(t, os.Remove(link)) // uninstalled
	bin := d.say(bob, "hello from bob")
	gone := d.waitBot(b, "the explanation", func(m telegramtest.Message) bool {
		return m.ReplyTo == bin.ID && strings.Contains(m.Text, "the Claude CLI is not at")
	})
	assert.Contains(t, gone.Text, link)
	in2 := d.say(alice, "still there?")
	d.waitBot(a, "alice's live CLI answers", func(m telegramtest.Message) bool {
		return isFinal(m, in2.ID) && strings.Contains(m.Text, "echo: still there?")
	})
	require.False(t, p.exited(), "the daemon stays up")

	require.NoError(t, os.Symlink(claude.Binary, link)) // reinstalled
	back := time.Now()
	bin2 := d.say(bob, "hello again")
	d.waitBot(b, "bob's answer", func(m telegramtest.Message) bool { return isFinal(m, bin2.ID) })
	logRecovery(t, "missing binary (reinstalled to the next answer, new CLI)", time.Since(back))
	requireSentOnce(t, d.tg, a)
	requireSentOnce(t, d.tg, b)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// TestFaultFullDisk: the state dir is a real, tiny tmpfs (in a mount
// namespace of the test's own). It fills up while the daemon runs: the
// answer still arrives, the chat gets one notice, each kind of refused
// write is logged once; once space returns the notice is deleted by
// itself, and what could not be saved is saved.
func TestFaultFullDisk(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.withClaude()
	ns := privateTmpfs(t, d.cfg.StateDir, "8m")
	d.writeConfig()
	p := startCommand(t, exec.Command("nsenter", "--mount="+ns.mntNS, "--", binary, "run", "--config", d.cfgPath), baseEnv(d.home, d.env...))
	d.waitReady(p)
	chat := telegramtest.ChatID(alice)
	warm := d.say(alice, "before the disk fills")
	d.waitBot(chat, "an answer", func(m telegramtest.Message) bool { return isFinal(m, warm.ID) })

	filler := ns.fill(t)
	in := d.say(alice, "SLOWDRAIN while the disk is full")
	d.waitBot(chat, "the answer, disk full or not", func(m telegramtest.Message) bool { return isFinal(m, in.ID) })
	notice := d.waitBot(chat, "the notice", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "untether could not save state") })
	assert.Contains(t, notice.Text, "the disk is full")
	p.waitLog("the refused write with path and free space", func(l logLine) bool {
		return strings.HasPrefix(l.str("message"), "could not save state") && l.str("path") != "" && l.fields["free_bytes"] != nil
	})

	require.NoError(t, os.Remove(filler))
	freed := time.Now()
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		m, _ := sn.Message(chat, notice.ID)
		return m.Deleted
	})
	logRecovery(t, "full disk (space back to the notice withdrawn)", time.Since(freed))
	p.waitLog("the recovery", msgIs("state is saved again"))
	// Once per kind per episode: a write can get through while the disk is
	// "full" (SQLite freed a page), which ends the episode ("state is saved
	// again") and lets the next refusal be logged anew.
	perKind, episodes := map[string]int{}, 1
	for _, l := range p.logs() {
		switch {
		case strings.HasPrefix(l.str("message"), "could not save state"):
			perKind[l.str("kind")]++
			assert.Equal(t, 1, perKind[l.str("kind")], "kind %s logged once in episode %d", l.str("kind"), episodes)
		case l.str("message") == "state is saved again":
			perKind, episodes = map[string]int{}, episodes+1
		}
	}
	notices := 0
	for _, c := range d.tg.Snapshot().CallsOf("sendMessage") {
		if c.OK() && strings.Contains(c.Params["text"], "untether could not save state") {
			notices++
		}
	}
	assert.Equal(t, 1, notices, "one notice")
	requireSentOnce(t, d.tg, chat)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())

	// What the full disk refused was saved after all. SQLite resolves the
	// /proc/<pid>/root link to a path outside the namespace, so the test
	// reads a copy (the daemon closed the database: it is one file).
	db, err := os.ReadFile(ns.view(filepath.Join(d.cfg.StateDir, state.FileName)))
	require.NoError(t, err)
	copied := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(copied, state.FileName), db, 0o600))
	st, err := state.Open(context.Background(), copied)
	require.NoError(t, err)
	defer st.Close()
	off, err := st.LastUpdateID(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(d.tg.Snapshot().UpdateOf(chat, in.ID)), off, "the offset covers the message answered on a full disk")
	live, err := st.ListLive(context.Background())
	require.NoError(t, err)
	assert.Empty(t, live)
	pending, err := st.PendingOutbox(context.Background())
	require.NoError(t, err)
	assert.Empty(t, pending)
}

// mountNS is a private mount namespace held open by a sleeping process.
type mountNS struct {
	holder int
	mntNS  string // for nsenter --mount=
	dir    string // the tmpfs mount point
}

// privateTmpfs mounts a tmpfs of size on dir in a new mount namespace that
// only processes started through nsenter see; the test reaches it through
// /proc/<holder>/root. Where that is impossible the test is skipped, or
// fails under UNTETHER_REQUIRE_REAL_CLAUDE=1.
func privateTmpfs(t *testing.T, dir, size string) *mountNS {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for _, tool := range []string{"unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			cannotIsolate(t, err)
		}
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size="$2",mode=0700 tmpfs "$1" && echo mounted && exec sleep 3600`, "sh", dir, size)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "mounted" {
		cannotIsolate(t, fmt.Errorf("mount a tmpfs in a new mount namespace: %s", strings.TrimSpace(stderr.String())))
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	return &mountNS{holder: cmd.Process.Pid, mntNS: "/proc/" + pid + "/ns/mnt", dir: dir}
}

func cannotIsolate(t *testing.T, err error) {
	t.Helper()
	if os.Getenv(claudetest.EnvRequire) == "1" {
		t.Fatalf("cannot give the test a private mount namespace (needs root, unshare and nsenter): %v", err)
	}
	t.Skipf("cannot give the test a private mount namespace (needs root, unshare and nsenter): %v", err)
}

// view is path as seen from inside the namespace.
func (n *mountNS) view(path string) string {
	return filepath.Join("/proc", strconv.Itoa(n.holder), "root", path)
}

// fill writes a file on the tmpfs until it is full and returns its path.
func (n *mountNS) fill(t *testing.T) string {
	t.Helper()
	p := n.view(filepath.Join(n.dir, "filler"))
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64*1024)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			break
		}
	}
	for { // the last bytes
		if _, err := f.Write(chunk[:512]); err != nil {
			return p
		}
	}
}

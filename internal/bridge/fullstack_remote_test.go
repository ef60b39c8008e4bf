package bridge_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/runner/sshtest"
	"github.com/untether/untether/internal/telegramtest"
)

// remoteCLI finds the CLI of session id on the test's "other host" (this
// machine, reached through sshd): a process running binary with id on its
// command line. It returns its pid and environment, 0 when none runs.
func remoteCLI(t *testing.T, binary, id string) (int, []string) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmdline, []byte(binary+"\x00")) || !bytes.Contains(cmdline, []byte(id)) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			continue // exited, not yet reaped
		}
		environ, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		return pid, strings.Split(string(environ), "\x00")
	}
	return 0, nil
}

// ancestors lists pid's parents up to init.
func ancestors(pid int) []int {
	var out []int
	for pid > 1 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			break
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		pid, _ = strconv.Atoi(f[1])
		out = append(out, pid)
	}
	return out
}

// TestRemoteProjectOverSSH: a project on "another host" (a real sshd on
// 127.0.0.1, the same user) runs the real CLI through ssh with the offline
// environment sent over the connection; a dead connection is a crash event
// whose remote CLI ends, and the next message resumes; /new leaves nothing
// running over there.
func TestRemoteProjectOverSSH(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	srv := sshtest.Start(t)
	far := realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{
		"far": {Path: far, Host: srv.Host, SSHOptions: srv.Options},
	}, func(c *config.Config) { c.Telegram.DefaultProject = "far" }),
		withRules(fakeapi.ToolTurn("LONGWRITE", "Write", map[string]any{"file_path": "{{cwd}}/generated.txt", "content": longContent(45)}, "Written.")))

	first := r.ask(chat, "REMEMBER mango far away")
	assert.True(t, ranIn(r.callFor("REMEMBER mango far away"), far), "the CLI ran in the project's directory over there")
	assert.Contains(t, first.Text, "📁 far")
	session := r.sessionOf(key)

	pid, env := remoteCLI(t, r.claude.Binary, session)
	require.NotZero(t, pid, "the CLI runs on the other host")
	ssh := r.b.ChatPID(key)
	require.NotZero(t, ssh)
	assert.NotEqual(t, pid, ssh, "untether supervises the local ssh")
	assert.Contains(t, ancestors(pid), srv.PID(), "the CLI was started by sshd")
	assert.NotContains(t, ancestors(pid), ssh, "not by the local ssh")
	assert.Contains(t, env, "ANTHROPIC_BASE_URL="+r.claude.API.URL(), "the fake API's loopback URL went over the connection")
	assert.Contains(t, env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "with the offline environment")
	assert.Contains(t, env, "HOME="+r.claude.Home)
	for _, kv := range env {
		assert.NotContains(t, kv, r.tg.Token(), "the bot token never reaches the CLI")
	}

	// The connection dies mid-turn.
	in := r.say(chat, alice, "SLOW please")
	r.streaming(chat, in.ID, "slow answer")
	require.NoError(t, syscall.Kill(ssh, syscall.SIGKILL))
	killed := time.Now()
	r.waitBot(chat, "crash notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "stopped unexpectedly")
	})
	require.Eventually(t, func() bool { p, _ := remoteCLI(t, r.claude.Binary, session); return p == 0 }, wait, 50*time.Millisecond,
		"the remote CLI ends with its connection")
	t.Logf("measured: the remote CLI was gone %s after its ssh was killed mid-turn", time.Since(killed).Round(10*time.Millisecond))

	r.ask(chat, "what did I ask you to remember?")
	assert.True(t, r.callFor("what did I ask you to remember?").AnyUserContains("REMEMBER mango far away"), "the next message resumed")
	assert.Equal(t, session, r.sessionOf(key))

	require.NotZero(t, func() int { p, _ := remoteCLI(t, r.claude.Binary, session); return p }())
	closed := time.Now()
	r.command(chat, "/new", "New session")
	require.Eventually(t, func() bool { p, _ := remoteCLI(t, r.claude.Binary, session); return p == 0 }, wait, 50*time.Millisecond,
		"/new leaves no CLI on the other host")
	t.Logf("measured: /new ended the remote CLI in %s", time.Since(closed).Round(10*time.Millisecond))

	r.command(chat, "/branch x", "works only for projects on this machine")
	require.NoError(t, os.WriteFile(filepath.Join(far, "notes.txt"), []byte("far away"), 0o644))
	r.command(chat, "/get notes.txt", "this chat's project is on another host")
	assert.Empty(t, r.tg.Snapshot().CallsOf("sendDocument"), "no file of this machine went out in its place")

	// A cut Edit/Write preview offers no 📄 Full diff: it would be written
	// to a directory this machine does not have.
	long := r.say(chat, alice, "LONGWRITE please")
	ap := r.approvalMessage(chat, "generated.txt")
	assert.Contains(t, ap.Text, "more lines", "the preview is cut")
	assert.Empty(t, buttonData(ap, "Full diff"), "no button that could only refuse")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Deny"))
	r.finalAnswer(chat, long.ID, "")
}

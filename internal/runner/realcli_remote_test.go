package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/sshtest"
)

// remoteCLIs returns the processes running binary with id on their command
// line: a remote session's CLI, which on the test's "other host" is a
// process of this machine, outside the daemon's tree (sshd started it).
func remoteCLIs(t *testing.T, binary, id string) []int {
	t.Helper()
	procs, err := listProcs()
	require.NoError(t, err)
	var out []int
	for _, p := range procs {
		if p.dead() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err != nil {
			continue
		}
		args := bytes.Split(b, []byte{0})
		if string(args[0]) == binary && bytes.Contains(b, []byte(id)) {
			out = append(out, p.PID)
		}
	}
	return out
}

// TestRealCLIRemoteOverSSH runs a session through a real sshd on
// 127.0.0.1: the answer, the workdir, a dead connection (the local ssh
// killed) that ends the remote CLI and is resumed by the next message, and
// a close that leaves nothing running over there.
func TestRealCLIRemoteOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	r := newRealSession(t, func(c *Config) {
		c.Remote = &Remote{Host: srv.Host, SSHOptions: srv.Options}
		c.IncludePartialMessages = true
	})
	send(t, r.s, "REMEMBER mango over ssh")
	ev, i := r.log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "echo: REMEMBER mango over ssh", ev.(TurnCompleted).Answer)
	start, _ := r.log.waitFor(t, 0, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
	assert.Equal(t, r.env.Workdir, start.(TurnStarted).Cwd, "the CLI ran in the project's directory over there")

	clis := remoteCLIs(t, r.env.Binary, string(r.s.ID()))
	require.Len(t, clis, 1, "one CLI runs on the other host")
	local := r.s.PID()
	require.NotZero(t, local)
	assert.NotEqual(t, local, clis[0], "the runner supervises the local ssh, not the CLI")

	// The connection dies mid-turn: a crash event, and the CLI over there,
	// busy streaming, ends.
	send(t, r.s, "SLOW please")
	_, i = r.log.waitFor(t, i+1, "streaming", func(ev Event) bool { return is[TextDelta](ev) })
	require.NoError(t, syscall.Kill(local, syscall.SIGKILL))
	killed := time.Now()
	ev, i = r.log.waitFor(t, i+1, "process exited", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.False(t, ev.(ProcessExited).Requested, "a dead connection is a crash")
	took := waitPIDGone(t, clis[0], 30*time.Second)
	t.Logf("measured: the remote CLI was gone %s after the local ssh was killed (%s after the exit event)", time.Since(killed).Round(10*time.Millisecond), took.Round(10*time.Millisecond))

	// The next message resumes, with the history, over a new connection.
	send(t, r.s, "what did I ask you to remember?")
	ev, i = r.log.waitFor(t, i+1, "answer after the crash", turnDone)
	assert.Equal(t, "echo: what did I ask you to remember?", ev.(TurnCompleted).Answer)
	calls := r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("REMEMBER mango"), "resumed with its history")

	clis = remoteCLIs(t, r.env.Binary, string(r.s.ID()))
	require.Len(t, clis, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	closed := time.Now()
	require.NoError(t, r.s.CloseProcess(ctx))
	_, _ = r.log.waitFor(t, i+1, "closed", func(ev Event) bool { return is[ProcessExited](ev) })
	waitPIDGone(t, clis[0], 30*time.Second)
	t.Logf("measured: closing a remote session took %s until neither ssh nor the CLI ran", time.Since(closed).Round(10*time.Millisecond))
}

// TestSSHAloneLeavesTheRemoteCommand is why the wrapper exists: without a
// terminal, sshd does not stop a command whose channel went away, so a
// killed ssh client leaves its remote process running.
func TestSSHAloneLeavesTheRemoteCommand(t *testing.T) {
	srv := sshtest.Start(t)
	// A duration nobody else sleeps, to find the process by.
	marker := "600." + strconv.Itoa(os.Getpid())
	args := append([]string{"-T", "-o", "BatchMode=yes"}, srv.Options...)
	cmd := exec.Command("ssh", append(args, srv.Host, "--", "exec sleep "+marker)...)
	require.NoError(t, cmd.Start())
	var orphan procStat
	require.Eventually(t, func() bool {
		pids := sleeps(t, marker)
		if len(pids) != 1 {
			return false
		}
		st, err := readProcStat(pids[0])
		orphan = st
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
	t.Cleanup(func() { _ = syscall.Kill(orphan.PID, syscall.SIGKILL) })
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	// sshd's process for the connection ends with it; the command is then
	// reparented, and nothing has stopped it.
	require.Eventually(t, func() bool {
		st, err := readProcStat(orphan.PID)
		return err == nil && st.PPID != orphan.PPID
	}, 30*time.Second, 20*time.Millisecond, "sshd's session process did not end")
	st, err := readProcStat(orphan.PID)
	require.NoError(t, err)
	assert.False(t, st.dead(), "the remote command outlived its ssh client and its connection")
}

func sleeps(t *testing.T, marker string) []int {
	procs, err := listProcs()
	require.NoError(t, err)
	var out []int
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err == nil && !p.dead() && bytes.Equal(b, []byte("sleep\x00"+marker+"\x00")) {
			out = append(out, p.PID)
		}
	}
	return out
}

// TestRealCLIContinue: a session started at a terminal in the workdir is
// picked up by a session made with Continue, which adopts its id, and the
// next process resumes that id.
func TestRealCLIContinue(t *testing.T) {
	r := newRealSession(t, func(c *Config) { c.Continue = true })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	terminal, err := r.env.Converse(ctx, "REMEMBER kiwi at the desk")
	require.NoError(t, err)
	require.NotEqual(t, terminal, string(r.s.ID()))

	send(t, r.s, "what fruit?")
	ev, i := r.log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, SessionID(terminal), ev.(TurnCompleted).SessionID)
	assert.Equal(t, SessionID(terminal), r.s.ID(), "the session adopted the terminal's id")
	calls := r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("REMEMBER kiwi"), "with the terminal's history")

	require.NoError(t, r.s.CloseProcess(ctx))
	_, i = r.log.waitFor(t, i+1, "closed", func(ev Event) bool { return is[ProcessExited](ev) })
	send(t, r.s, "and again?")
	ev, _ = r.log.waitFor(t, i+1, "answer after a restart", turnDone)
	assert.Equal(t, SessionID(terminal), ev.(TurnCompleted).SessionID, "the next process resumed the adopted id")
}

// TestRealCLIContinueWithNothingToContinue: in a directory without a
// conversation, --continue starts a new one, and the session takes its id.
func TestRealCLIContinueWithNothingToContinue(t *testing.T) {
	r := newRealSession(t, func(c *Config) { c.Continue = true })
	send(t, r.s, "anyone there?")
	ev, _ := r.log.waitFor(t, 0, "answer", turnDone)
	tc := ev.(TurnCompleted)
	assert.True(t, tc.OK)
	assert.Equal(t, "echo: anyone there?", tc.Answer)
	assert.Equal(t, tc.SessionID, r.s.ID())
}

// TestRealCLIRemoteUnderAFishLikeLoginShell: the real CLI over ssh on a
// host whose login shell reads command lines as fish does, with a prompt
// and a model that would break POSIX quoting there: the CLI answers, it got
// the prompt and the model intact, and nothing else ran. Then a resume over
// a new connection.
func TestRealCLIRemoteUnderAFishLikeLoginShell(t *testing.T) {
	srv := sshtest.Start(t, sshtest.FishLike())
	pwned := filepath.Join(t.TempDir(), "PWNED")
	prompt := `Say it\'s fine;touch ` + pwned + `;#` + "\nsecond line $(id)"
	r := newRealSession(t, func(c *Config) {
		c.Remote = &Remote{Host: srv.Host, SSHOptions: srv.Options}
		c.Model = "claude-sonnet-4-5"
		c.ExtraArgs = []string{"--append-system-prompt", prompt}
	})
	send(t, r.s, "REMEMBER plum")
	_, i := r.log.waitFor(t, 0, "answer", answerIs("echo: REMEMBER plum"))
	calls := r.env.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.Contains(t, last.System(), prompt, "the prompt arrived byte for byte")
	assert.Equal(t, "claude-sonnet-4-5", last.Model())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, r.s.CloseProcess(ctx))
	_, i = r.log.waitFor(t, i, "closed", func(ev Event) bool { return is[ProcessExited](ev) })
	send(t, r.s, "what fruit?")
	r.log.waitFor(t, i, "answer after resume", answerIs("echo: what fruit?"))
	calls = r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("REMEMBER plum"), "resumed with its history")
	assert.NoFileExists(t, pwned)
}

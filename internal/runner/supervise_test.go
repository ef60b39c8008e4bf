package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	var raw []byte
	require.Eventually(t, func() bool {
		var err error
		raw, err = os.ReadFile(path)
		return err == nil && len(strings.TrimSpace(string(raw))) > 0
	}, waitLimit, 10*time.Millisecond, "pid file %s", path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	return pid
}

// escapedTool returns the process whose pid is in pidFile, checking it
// runs outside the CLI's process group; it is killed should the test fail.
func escapedTool(t *testing.T, pidFile string, cli int) procStat {
	t.Helper()
	pid := readPIDFile(t, pidFile)
	st, err := readProcStat(pid)
	require.NoError(t, err, "the escaped tool runs while the CLI does")
	t.Cleanup(func() { _ = killExact(st) })
	require.False(t, st.dead())
	require.NotEqual(t, cli, st.PGID, "it left the CLI's process group, so a group kill misses it")
	return st
}

// requireGone asserts that pid names no process at all, not even a zombie.
func requireGone(t *testing.T, pid int, start uint64) {
	t.Helper()
	st, err := readProcStat(pid)
	if err == nil && st.StartTime == start {
		t.Fatalf("process %d still exists (state %c, parent %d)", pid, st.State, st.PPID)
	}
}

func TestSessionKillsToolsThatLeftTheGroup(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	pidFile := filepath.Join(t.TempDir(), "setsid.pid")
	s, log := newFakeSession(t, fakeScript{SetsidPIDFile: pidFile}, nil)
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	st := escapedTool(t, pidFile, s.PID())

	require.NoError(t, s.CloseProcess(context.Background()))
	log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	// By the time the exit is reported, it was killed and reaped.
	requireGone(t, st.PID, st.StartTime)
}

func TestSessionOrphanReaperLeavesNoZombie(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	// An adopted orphan that exits on its own while its session runs.
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeCLIEnv+"=exit")
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start()) // not startOwned: nobody Waits for an orphan
	pid := cmd.Process.Pid
	require.Eventually(t, func() bool {
		st, err := readProcStat(pid)
		return err != nil || st.PPID != os.Getpid() // reaped by the SIGCHLD reaper
	}, waitLimit, 5*time.Millisecond)
}

func TestKillExactChecksStartTime(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeCLIEnv+"=grandchild")
	require.NoError(t, startOwned(cmd))
	st, err := readProcStat(cmd.Process.Pid)
	require.NoError(t, err)

	reused := st
	reused.StartTime++
	require.ErrorIs(t, killExact(reused), unix.ESRCH, "a pid naming another process is not killed")
	require.NoError(t, unix.Kill(st.PID, 0))
	require.NoError(t, killExact(st))
	err = waitOwned(cmd)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "signal: killed", ee.Error())
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     procStat
		bad      bool
	}{
		{name: "plain", in: "42 (sleep) S 1 42 42 0 -1 4194560 110 0 0 0 0 0 0 0 20 0 1 0 123456 8192 0 18446744073709551615",
			want: procStat{PID: 42, PPID: 1, PGID: 42, State: 'S', Comm: "sleep", Flags: 4194560, StartTime: 123456}},
		{name: "comm with spaces and parens", in: "7 (a) b (c)) Z 3 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
			want: procStat{PID: 7, PPID: 3, PGID: 5, State: 'Z', Comm: "a) b (c)", StartTime: 99}},
		{name: "exiting", in: "9 (claude) D 1 9 9 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0",
			want: procStat{PID: 9, PPID: 1, PGID: 9, State: 'D', Comm: "claude", Flags: 4194564, StartTime: 77}},
		{name: "truncated", in: "7 (x) S 1 2 3", bad: true},
		{name: "no comm", in: "7 x S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.in))
			if tt.bad {
				assert.ErrorIs(t, err, errBadStat)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.name == "exiting", got.exiting())
		})
	}
	self, err := readProcStat(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, os.Getppid(), self.PPID)
	assert.Positive(t, self.StartTime)
}

// countingReader counts what was read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// endless is a line that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'A'
	}
	return len(p), nil
}

func TestLineReaderLimit(t *testing.T) {
	const limit = 200 << 10
	tests := []struct {
		name string
		in   io.Reader
		want []int // lengths of the lines returned before the error
		err  error
	}{
		{name: "at the limit", in: strings.NewReader(strings.Repeat("x", limit) + "\r\nok\n"), want: []int{limit, 2}, err: io.EOF},
		{name: "unterminated at the limit", in: strings.NewReader(strings.Repeat("x", limit)), want: []int{limit}, err: io.EOF},
		{name: "one over", in: strings.NewReader("a\n" + strings.Repeat("x", limit+1) + "\n"), want: []int{1}, err: ErrLineTooLong},
		{name: "short line over a small limit", in: strings.NewReader(strings.Repeat("x", limit+1) + "\n"), err: ErrLineTooLong},
		{name: "endless", in: endless{}, err: ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &countingReader{r: tt.in}
			lr := newLineReader(cr, limit)
			var got []int
			var err error
			for {
				var line []byte
				if line, err = lr.next(); err != nil {
					break
				}
				got = append(got, len(line))
			}
			assert.ErrorIs(t, err, tt.err)
			assert.Equal(t, tt.want, got)
			// The reader stops soon after the limit: memory stays bounded.
			assert.LessOrEqual(t, cr.n, 2*limit+2*(64<<10)+10)
		})
	}
}

func TestSessionKillsCLIOnLineOverLimit(t *testing.T) {
	// The real 64 MiB limit against a CLI printing one endless line.
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "ENDLESS")
	ev, i := log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	exit := ev.(ProcessExited)
	require.ErrorIs(t, exit.Err, ErrLineTooLong)
	assert.Contains(t, exit.Err.Error(), "more than 67108864 bytes")
	assert.False(t, exit.Requested, "a crash, not a requested stop")
	assert.Equal(t, "killed", exit.Signal)
	send(t, s, "after the flood")
	ev, _ = log.waitFor(t, i, "resumed turn", turnDone)
	assert.Equal(t, "echo: after the flood", ev.(TurnCompleted).Answer)
}

func TestSessionSurvivesPanics(t *testing.T) {
	tests := []struct {
		point faultPoint
		// provoke makes the session reach point.
		provoke func(t *testing.T, s *Session)
		where   string
	}{
		{point: faultReadLine, where: "stdout reader", provoke: func(t *testing.T, s *Session) { send(t, s, "hello") }},
		{point: faultSupervise, where: "supervisor", provoke: func(t *testing.T, s *Session) {
			send(t, s, "hello")
			require.NoError(t, s.CloseProcess(context.Background()))
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.point), func(t *testing.T) {
			var armed atomic.Bool
			armed.Store(true)
			s, log := newFakeSession(t, fakeScript{}, func(c *Config) {
				c.fault = func(p faultPoint) {
					if p == tt.point && armed.CompareAndSwap(true, false) {
						panic("injected fault")
					}
				}
			})
			tt.provoke(t, s)
			ev, i := log.waitFor(t, 0, "crash", func(ev Event) bool { return is[ProcessExited](ev) })
			exit := ev.(ProcessExited)
			require.ErrorIs(t, exit.Err, ErrInternal)
			assert.Contains(t, exit.Err.Error(), tt.where+": injected fault")
			assert.Equal(t, StateExited, s.State())
			assert.Zero(t, s.PID())
			// The session (and this process) go on: the next message resumes.
			send(t, s, "still here?")
			ev, _ = log.waitFor(t, i, "resumed turn", func(ev Event) bool {
				tc, ok := ev.(TurnCompleted)
				return ok && tc.Answer == "echo: still here?"
			})
			assert.True(t, ev.(TurnCompleted).OK)
		})
	}
}

// TestReapOrphansSparesChildrenInOurGroup: a child started by plain
// exec.Command elsewhere in the daemon (git, ffmpeg) is left to its Wait.
func TestReapOrphansSparesChildrenInOurGroup(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeCLIEnv+"=exit")
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		st, err := readProcStat(cmd.Process.Pid)
		return err == nil && st.dead()
	}, waitLimit, 5*time.Millisecond)
	reapOrphans()
	require.NoError(t, cmd.Wait(), "Wait got the exit status")
	assert.True(t, cmd.ProcessState.Success())
}

func TestReapOrphansSparesOwnedChildren(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeCLIEnv+"=exit")
	require.NoError(t, startOwned(cmd))
	// Wait until it is a zombie, then run the reaper: it must leave it to Wait.
	require.Eventually(t, func() bool {
		st, err := readProcStat(cmd.Process.Pid)
		return err == nil && st.dead()
	}, waitLimit, 5*time.Millisecond)
	reapOrphans()
	require.NoError(t, waitOwned(cmd), "Wait got the exit status")
	assert.True(t, cmd.ProcessState.Success())
}

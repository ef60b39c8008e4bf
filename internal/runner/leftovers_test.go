package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trackerLog records what a ProcessTracker is told.
type trackerLog struct {
	mu      sync.Mutex
	started []ProcRecord
	exited  []ProcRecord
}

func (l *trackerLog) ProcessStarted(r ProcRecord) {
	l.mu.Lock()
	l.started = append(l.started, r)
	l.mu.Unlock()
}
func (l *trackerLog) ProcessExited(r ProcRecord) {
	l.mu.Lock()
	l.exited = append(l.exited, r)
	l.mu.Unlock()
}

func TestSessionTracksItsProcesses(t *testing.T) {
	tr := &trackerLog{}
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, func(c *Config) { c.Procs = tr })
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	pid := s.PID()
	start, err := ProcStartTime(pid)
	require.NoError(t, err)
	tr.mu.Lock()
	require.Len(t, tr.started, 1)
	rec := tr.started[0]
	tr.mu.Unlock()
	assert.Equal(t, ProcRecord{PID: pid, StartTime: start, Tag: rec.Tag}, rec)
	raw, err := os.ReadFile(argv)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "\n"+procTagEnv+"="+rec.Tag+"\n", "the CLI carries its tag")

	require.NoError(t, s.CloseProcess(context.Background()))
	log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	tr.mu.Lock()
	defer tr.mu.Unlock()
	assert.Equal(t, []ProcRecord{rec}, tr.exited)
}

// startLeftover starts the test binary sleeping, as a stand-in for a
// process a killed daemon left behind; cleanup kills it if it survived.
func startLeftover(t *testing.T, tag string, attr *syscall.SysProcAttr) procStat {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeCLIEnv+"=grandchild")
	if tag != "" {
		cmd.Env = append(cmd.Env, procTagEnv+"="+tag)
	}
	cmd.SysProcAttr = attr
	require.NoError(t, cmd.Start()) // not owned: like an orphan, nobody Waits for it
	st, err := readProcStat(cmd.Process.Pid)
	require.NoError(t, err)
	t.Cleanup(func() { _ = killExact(st) })
	return st
}

func alive(p procStat) bool {
	st, err := readProcStat(p.PID)
	return err == nil && st.StartTime == p.StartTime && !st.dead()
}

func TestKillLeftovers(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	// A leftover CLI in its own group, a tool in that group without the
	// tag, and a tool that setsid'd away with it.
	cli := startLeftover(t, "tag-a", &syscall.SysProcAttr{Setpgid: true})
	inGroup := startLeftover(t, "", &syscall.SysProcAttr{Setpgid: true, Pgid: cli.PID})
	escaped := startLeftover(t, "tag-a", &syscall.SysProcAttr{Setsid: true})
	// A process whose pid a record names, but with another start time: a
	// reused pid, never to be touched; and one of another tag.
	reused := startLeftover(t, "", &syscall.SysProcAttr{Setpgid: true})
	other := startLeftover(t, "tag-b", nil)

	killed, err := KillLeftovers([]ProcRecord{
		{PID: cli.PID, StartTime: cli.StartTime, Tag: "tag-a"},
		{PID: reused.PID, StartTime: reused.StartTime + 1, Tag: "tag-gone"},
	})
	require.NoError(t, err)
	pids := []int{}
	for _, k := range killed {
		pids = append(pids, k.PID)
		assert.NotEmpty(t, k.Name)
	}
	assert.ElementsMatch(t, []int{cli.PID, inGroup.PID, escaped.PID}, pids)
	for _, p := range []procStat{cli, inGroup, escaped} {
		requireGone(t, p.PID, p.StartTime)
	}
	assert.True(t, alive(reused), "a reused pid is left alone")
	assert.True(t, alive(other), "another tag is left alone")

	killed, err = KillLeftovers(nil)
	require.NoError(t, err)
	assert.Empty(t, killed)
}

// onExitingThread runs f on a goroutine locked to a thread other than the
// main one (which the runtime never destroys), returns that thread's id,
// and lets the thread exit: a goroutine that ends locked takes its thread
// with it.
func onExitingThread(f func()) int {
	done := make(chan int)
	var try func()
	try = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == os.Getpid() {
			// Hold the main thread so the next try lands elsewhere.
			go try()
			tid := <-done
			runtime.UnlockOSThread()
			done <- tid
			return
		}
		f()
		done <- syscall.Gettid()
	}
	go try()
	return <-done
}

// golang/go#27505: the parent-death signal fires when the thread that
// forked the child exits, not the process. A CLI started by a goroutine
// whose thread then exits must live on.
func TestCLISurvivesTheExitOfTheSpawningThread(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	var err error
	tid := onExitingThread(func() { _, err = s.Send(context.Background(), UserInput{Text: "one"}) })
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return err != nil
	}, waitLimit, 5*time.Millisecond, "the spawning thread exited")
	_, i := log.waitFor(t, 0, "turn", turnDone)
	pid := s.PID()
	send(t, s, "two")
	ev, _ := log.waitFor(t, i+1, "second turn", turnDone)
	assert.Equal(t, "echo: two", ev.(TurnCompleted).Answer)
	assert.Equal(t, pid, s.PID())
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, ev := range log.events {
		if e, ok := ev.(ProcessExited); ok {
			t.Fatalf("the CLI died: %+v", e)
		}
	}
}

// TestKillLeftoversLeavesTheDyingAlone: a recorded CLI that is already
// exiting when the next start looks (PF_EXITING: its parent-death signal
// landed and the kernel is still freeing its memory) gets no second signal
// and is not counted as a leftover, but the clean-up still waits for it.
func TestKillLeftoversLeavesTheDyingAlone(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	// A stand-in for the dying CLI: it exits by itself in a moment.
	cmd := exec.Command("sleep", "0.3")
	cmd.Env = append(os.Environ(), procTagEnv+"=tag-dying")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, startOwned(cmd))
	exited := make(chan error, 1)
	go func() { exited <- waitOwned(cmd) }()
	dying, err := readProcStat(cmd.Process.Pid)
	require.NoError(t, err)
	escaped := startLeftover(t, "tag-dying", &syscall.SysProcAttr{Setsid: true})

	defer func(orig func() ([]procStat, error)) { procList = orig }(procList)
	procList = func() ([]procStat, error) {
		procs, err := listProcs()
		for i := range procs {
			if procs[i].PID == dying.PID {
				procs[i].Flags |= pfExiting
			}
		}
		return procs, err
	}
	start := time.Now()
	killed, err := KillLeftovers([]ProcRecord{{PID: dying.PID, StartTime: dying.StartTime, Tag: "tag-dying"}})
	require.NoError(t, err)
	require.Len(t, killed, 1, "only the escaped tool: %v", killed)
	assert.Equal(t, escaped.PID, killed[0].PID)
	assert.NotEmpty(t, killed[0].Name)
	if st, err := readProcStat(dying.PID); err == nil && st.StartTime == dying.StartTime {
		t.Fatalf("KillLeftovers returned after %v, before the dying process was gone", time.Since(start))
	}
	require.NoError(t, <-exited, "it ended by itself: KillLeftovers sent it no signal")
}

package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// process is one running CLI.
type process struct {
	cmd       *exec.Cmd
	stdin     *os.File
	stdout    *os.File
	pid       int
	resumed   bool
	stderr    *tailBuffer
	exited    chan struct{} // closed when cmd.Wait returned
	waitErr   error
	requested atomic.Bool // we asked it to stop
	// tag is in the CLI's environment and its tools': it finds the CLI's
	// process tree again after the CLI is gone (see killTree).
	tag string
	// failure is why we ended a process nobody asked to stop (a stdout
	// line over the limit, a recovered panic); see fail.
	failMu  sync.Mutex
	failure error
	// startTime is field 22 of its /proc stat (0 if unread): with the
	// pid, what ProcRecord keeps.
	startTime uint64
	// gone is set by the one call that finalises the process.
	gone atomic.Bool
	// Events are held back until the first system/init of a process started
	// with --resume/--session-id: if the id is unusable the CLI prints a
	// result and exits before any init, and the session recovers silently.
	holding bool
	held    []Event
	sawInit bool
	// started frees the pool's spawn slot; called on the first stdout line,
	// on exit, or after spawnSlotHold.
	started func()
}

// spawnSlotHold bounds how long one start-up holds a spawn slot.
const spawnSlotHold = 10 * time.Second

// ensureProcess starts a CLI process when none runs.
func (s *Session) ensureProcess(ctx context.Context) error {
	s.spawnMu.Lock()
	defer s.spawnMu.Unlock()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.proc != nil {
		s.mu.Unlock()
		return nil
	}
	s.setStateLocked(StateStarting)
	// The supervisor's count, taken now: Close, which may begin while the
	// spawn waits for a slot, then waits for this process too.
	s.workers.Add(1)
	s.mu.Unlock()

	proc, err := s.spawn(ctx)
	if err != nil {
		s.mu.Lock()
		s.setStateLocked(StateExited)
		s.mu.Unlock()
		s.workers.Done()
		return err
	}
	go s.supervise(proc) // it calls workers.Done
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		// Close began after our check and may have found no process to
		// end: this one must not outlive it.
		proc.requested.Store(true)
		killGroup(proc.pid)
		return fmt.Errorf("start CLI: %w", ErrClosed)
	}
	return nil
}

// args is the CLI's argument list. Values that did not come from the
// config (the session id, the model, the effort) are glued to their flags:
// ids.go.
func (s *Session) args(id SessionID, resume bool) []string {
	args := []string{"-p", "--output-format", "stream-json", "--input-format", "stream-json",
		"--verbose", "--permission-prompt-tool", "stdio", "--permission-mode", string(s.cfg.PermissionMode)}
	if s.cfg.Model != "" {
		args = append(args, "--model="+s.cfg.Model)
	}
	if s.cfg.Effort != "" {
		args = append(args, "--effort="+string(s.cfg.Effort))
	}
	if s.cfg.IncludePartialMessages {
		args = append(args, "--include-partial-messages")
	}
	switch {
	case s.cont:
		// The CLI picks the conversation; its system/init names it.
		args = append(args, "--continue")
	case resume:
		args = append(args, "--resume="+string(id))
	default:
		args = append(args, "--session-id="+string(id))
	}
	if s.cfg.MaxBudgetUSD != nil {
		if usd := s.cfg.MaxBudgetUSD(); usd > 0 {
			args = append(args, "--max-budget-usd", strconv.FormatFloat(usd, 'f', -1, 64))
		}
	}
	return append(args, s.cfg.ExtraArgs...)
}

// spawn starts a process and makes it the session's; called with spawnMu
// held. The caller supervises it.
func (s *Session) spawn(ctx context.Context) (*process, error) {
	// Before taking a slot: a spawn that cannot work evicts nobody.
	bin, err := s.preflight()
	if err != nil {
		return nil, err
	}
	// The spawn slot is held until the CLI has shown it is up (its first
	// stdout line), not just until exec: start-up is ~1 CPU-second, and
	// letting every queued CLI boot at once on a small machine makes all of
	// them slow instead of the first ones fast.
	release := func() {}
	if s.cfg.Pool != nil {
		r, err := s.cfg.Pool.acquire(ctx, s)
		if err != nil {
			return nil, err
		}
		var once sync.Once
		release = func() { once.Do(r) }
	}
	s.mu.Lock()
	id, resume := s.id, s.resume
	args := s.args(id, resume)
	s.mu.Unlock()
	var l launch
	if s.cfg.Remote != nil {
		l, err = s.remoteLaunch(bin, args) // remote.go
	} else {
		l = launch{bin: bin, args: args, env: BuildEnv(s.cfg.InheritEnv, s.cfg.Env), dir: s.cfg.Workdir, tag: uuid.NewString()}
		l.env = append(l.env, procTagEnv+"="+l.tag)
	}
	var proc *process
	if err == nil {
		proc, err = s.start(l)
	}
	if err != nil {
		release()
		if s.cfg.Pool != nil {
			s.cfg.Pool.processExited(s)
		}
		return nil, err
	}
	proc.tag = l.tag
	s.track(proc, true)
	proc.started = release
	// A CLI that prints nothing (it waits for input) still frees the slot.
	time.AfterFunc(spawnSlotHold, release)
	proc.resumed = resume
	proc.holding = true
	s.mu.Lock()
	s.proc = proc
	s.resume = true // from now on this id exists (or will, once a turn ran)
	s.cont = false  // and a --continue process has adopted its id at init
	s.bg.reset()    // a new process has no background work of its own
	s.setStateLocked(StateIdle)
	s.recomputeStateLocked()
	s.lastActive = time.Now()
	s.mu.Unlock()
	s.log.Info().Int("pid", proc.pid).Bool("resume", resume).Msg("CLI process started")
	s.emit(ProcessStarted{PID: proc.pid, Resumed: resume})
	return proc, nil
}

func (s *Session) start(l launch) (*process, error) {
	bin := l.bin
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start CLI: stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start CLI: stdout pipe: %w", err)
	}
	cmd := exec.Command(bin, l.args...)
	cmd.Dir = l.dir
	cmd.Env = l.env
	cmd.Stdin = inR
	// stdout is our own pipe, not StdoutPipe: Wait closes StdoutPipe's read
	// end as soon as the process exits, which can lose its last frames.
	cmd.Stdout = outW
	tail := &tailBuffer{max: 8 << 10}
	cmd.Stderr = tail
	// Its own group, so signals reach its tools; SIGKILL when the daemon
	// dies, however it dies (the spawn thread makes that hold, see
	// spawn_linux.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A grandchild that inherited stderr must not block Wait forever.
	cmd.WaitDelay = s.stopTimeout()
	if err := startOwned(cmd); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, s.startError(bin, err)
	}
	inR.Close()
	outW.Close()
	proc := &process{cmd: cmd, stdin: inW, stdout: outR, pid: cmd.Process.Pid,
		stderr: tail, exited: make(chan struct{})}
	if len(l.stdin) > 0 {
		// Far below the pipe's buffer, so this does not wait for the
		// process to read it.
		if _, err := inW.Write(l.stdin); err != nil {
			s.log.Warn().Err(err).Msg("write the remote CLI's environment")
		}
	}
	return proc, nil
}

// tailBuffer keeps the last max bytes written (the CLI's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// track tells the configured ProcessTracker that proc started or exited.
func (s *Session) track(proc *process, started bool) {
	if s.cfg.Procs == nil {
		return
	}
	if started {
		if st, err := ProcStartTime(proc.pid); err == nil {
			proc.startTime = st
		}
	}
	rec := ProcRecord{PID: proc.pid, StartTime: proc.startTime, Tag: proc.tag}
	if started {
		s.cfg.Procs.ProcessStarted(rec)
	} else {
		s.cfg.Procs.ProcessExited(rec)
	}
}

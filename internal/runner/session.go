package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// State is where a session's CLI process is in its life.
type State string

// Session states.
const (
	StateExited   State = "exited"   // no process; the next message starts one
	StateStarting State = "starting" // spawning (waiting for a slot or exec)
	StateIdle     State = "idle"     // process alive, no turn running
	StateBusy     State = "busy"     // a turn is running
	StateApproval State = "waiting_approval"
	StateStopping State = "stopping"
)

// Defaults for Config's zero values.
const (
	DefaultStopTimeout    = 10 * time.Second
	DefaultControlTimeout = 15 * time.Second
)

// Errors callers branch on.
var (
	ErrClosed         = errors.New("session closed")
	ErrUnknownRequest = errors.New("no pending approval with that request id")
	ErrNoProcess      = errors.New("no CLI process running")
	ErrControl        = errors.New("CLI refused control request")
)

// Config is everything a session needs to run the CLI.
type Config struct {
	Binary         string
	Workdir        string
	PermissionMode PermissionMode
	Model          string
	ExtraArgs      []string
	// Env is the configured environment table; it wins over InheritEnv.
	Env map[string]string
	// InheritEnv is the daemon's environment (os.Environ()); only the
	// allow-listed variables of it reach the CLI.
	InheritEnv []string
	// IncludePartialMessages streams answer text as TextDelta events.
	IncludePartialMessages bool
	IdleTimeout            time.Duration // 0: never close an idle process
	StopTimeout            time.Duration // each step of interrupt and close
	ControlTimeout         time.Duration // host → CLI control requests
	Pool                   *Pool         // nil: no spawn or live limits
	Logger                 zerolog.Logger
}

// Session is one Claude conversation, run by at most one CLI process at a
// time. The process is started by the first Send, restarted with --resume
// by the next Send after it exits (idle close, crash, eviction) and keeps
// the session id throughout. Events are delivered in order on Events();
// the consumer must keep reading until the channel is closed by Close.
type Session struct {
	cfg    Config
	log    zerolog.Logger
	events chan Event

	emitMu sync.RWMutex
	closed bool

	spawnMu sync.Mutex // one spawn at a time
	writeMu sync.Mutex // one stdin line at a time

	mu         sync.Mutex
	id         SessionID
	resume     bool // a process has used id: resume it instead of --session-id
	proc       *process
	state      State
	turnOpen   bool
	approvals  map[RequestID]json.RawMessage // pending can_use_tool → request input
	inflight   map[MessageUUID][]byte        // sent, not answered → the line, for a resend
	hostReqs   map[RequestID]chan ControlResponseBody
	lastActive time.Time
	idleTimer  *time.Timer
	stateCh    chan struct{} // closed and replaced on every state change
	tr         *Translator

	reqSeq atomic.Uint64
}

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

// NewSession prepares a session. id is the Claude session id; resume says
// whether a CLI process has used it before (then --resume, else
// --session-id). costBaseline is the CLI's running cost total persisted at
// the last result, used to compute per-turn costs after a resume.
func NewSession(cfg Config, id SessionID, resume bool, costBaseline float64) (*Session, error) {
	if cfg.Binary == "" {
		return nil, fmt.Errorf("new session: %w: no CLI binary", ErrInvalidInput)
	}
	if cfg.PermissionMode == "" {
		cfg.PermissionMode = ModeDefault
	}
	if !cfg.PermissionMode.Valid() {
		return nil, fmt.Errorf("new session: %w: permission mode %q", ErrInvalidInput, cfg.PermissionMode)
	}
	if err := CheckExtraArgs(cfg.ExtraArgs); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.ControlTimeout <= 0 {
		cfg.ControlTimeout = DefaultControlTimeout
	}
	if id == "" {
		id, resume = NewSessionID(), false
	}
	s := &Session{
		cfg:       cfg,
		events:    make(chan Event, 256),
		id:        id,
		resume:    resume,
		state:     StateExited,
		approvals: make(map[RequestID]json.RawMessage),
		inflight:  make(map[MessageUUID][]byte),
		hostReqs:  make(map[RequestID]chan ControlResponseBody),
		stateCh:   make(chan struct{}),
		tr:        NewTranslator(costBaseline),
	}
	s.log = cfg.Logger.With().Str("session", string(id)).Logger()
	return s, nil
}

// NewSessionID returns a fresh id for --session-id.
func NewSessionID() SessionID { return SessionID(uuid.NewString()) }

// Events returns the session's event stream.
func (s *Session) Events() <-chan Event { return s.events }

// ID returns the current session id (it changes only when a resume failed
// and a new session was started, which SessionRestarted announces).
func (s *Session) ID() SessionID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Resumable reports whether a process has used the session id, i.e. the
// next spawn will --resume it. Persist it with the id.
func (s *Session) Resumable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume
}

// State returns the process state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// PID returns the live CLI process's pid, or 0 when none runs.
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// PermissionMode returns the mode the next process starts in.
func (s *Session) PermissionMode() PermissionMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.PermissionMode
}

// Model returns the model the next process starts with ("" = CLI default).
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Model
}

// CostBaseline is the CLI's running cost total at the last result.
func (s *Session) CostBaseline() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tr.CostBaseline()
}

// PendingApprovals returns the ids of can_use_tool requests awaiting an answer.
func (s *Session) PendingApprovals() []RequestID {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]RequestID, 0, len(s.approvals))
	for id := range s.approvals {
		ids = append(ids, id)
	}
	return ids
}

func (s *Session) idleSince() (State, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.lastActive
}

// setStateLocked changes the state and wakes waiters.
func (s *Session) setStateLocked(st State) {
	if s.state == st {
		return
	}
	s.state = st
	close(s.stateCh)
	s.stateCh = make(chan struct{})
	if s.idleTimer != nil {
		s.idleTimer.Stop()
		s.idleTimer = nil
	}
	if st == StateIdle && s.cfg.IdleTimeout > 0 {
		s.idleTimer = time.AfterFunc(s.cfg.IdleTimeout, s.idleExpired)
	}
}

// recomputeStateLocked derives busy/approval/idle from what is outstanding.
func (s *Session) recomputeStateLocked() {
	if s.proc == nil || s.state == StateStopping || s.state == StateStarting {
		return
	}
	switch {
	case len(s.approvals) > 0:
		s.setStateLocked(StateApproval)
	case s.turnOpen || len(s.inflight) > 0:
		s.setStateLocked(StateBusy)
	default:
		s.setStateLocked(StateIdle)
	}
}

func (s *Session) idleExpired() {
	s.mu.Lock()
	idle := s.state == StateIdle && time.Since(s.lastActive) >= s.cfg.IdleTimeout
	s.mu.Unlock()
	if idle {
		s.log.Info().Dur("idle_timeout", s.cfg.IdleTimeout).Msg("closing idle CLI process")
		if err := s.CloseProcess(context.Background()); err != nil {
			s.log.Warn().Err(err).Msg("idle close")
		}
	}
}

// emit delivers an event unless the session is closed.
func (s *Session) emit(ev Event) {
	s.emitMu.RLock()
	defer s.emitMu.RUnlock()
	if s.closed {
		return
	}
	s.events <- ev
}

// Send writes a user message, starting (or resuming) the CLI process first
// when none runs. A message sent while a turn runs is queued or folded into
// that turn by the CLI; MessageLifecycle events tell which.
func (s *Session) Send(ctx context.Context, in UserInput) (MessageUUID, error) {
	id := MessageUUID(uuid.NewString())
	line, err := encodeUser(id, in)
	if err != nil {
		return "", fmt.Errorf("send message: %w", err)
	}
	// The message counts as in flight before the process exists: a process
	// started for it is then busy from its first moment, so the pool never
	// picks it as an idle victim before the message is written.
	forget := func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.recomputeStateLocked()
		s.mu.Unlock()
	}
	for attempt := 0; attempt < 2; attempt++ {
		s.mu.Lock()
		s.inflight[id] = line // (again: a process that exited meanwhile cleared it)
		s.lastActive = time.Now()
		s.mu.Unlock()
		if err = s.ensureProcess(ctx); err != nil {
			forget()
			return "", fmt.Errorf("send message: %w", err)
		}
		s.mu.Lock()
		s.recomputeStateLocked()
		proc := s.proc
		s.mu.Unlock()
		if err = s.write(proc, line); err == nil {
			return id, nil
		}
		// The process went away between the start and the write (a crash,
		// or a close that raced us): once it is gone, start another.
		if !errors.Is(err, ErrNoProcess) && !s.waitExit(ctx, proc, s.cfg.StopTimeout) {
			break
		}
	}
	forget()
	return "", fmt.Errorf("send message: %w", err)
}

// Prewarm starts the CLI process ahead of the first message and asks it to
// initialize, so that message does not pay the ~1 s start-up. It is used
// for recently active chats when the daemon starts; the idle timeout
// closes the process again if no message comes.
func (s *Session) Prewarm(ctx context.Context) error {
	if err := s.ensureProcess(ctx); err != nil {
		return fmt.Errorf("prewarm: %w", err)
	}
	if _, err := s.request(ctx, "initialize", nil); err != nil {
		return fmt.Errorf("prewarm: %w", err)
	}
	return nil
}

// Respond answers a pending can_use_tool request.
func (s *Session) Respond(id RequestID, d Decision) error {
	s.mu.Lock()
	input, ok := s.approvals[id]
	proc := s.proc
	s.mu.Unlock()
	if !ok || proc == nil {
		return fmt.Errorf("respond to %s: %w", id, ErrUnknownRequest)
	}
	line, err := encodeDecision(id, d, input)
	if err != nil {
		return fmt.Errorf("respond to %s: %w", id, err)
	}
	if err := s.write(proc, line); err != nil {
		return fmt.Errorf("respond to %s: %w", id, err)
	}
	s.mu.Lock()
	delete(s.approvals, id)
	s.lastActive = time.Now()
	s.recomputeStateLocked()
	s.mu.Unlock()
	return nil
}

// Interrupt stops the running turn: the interrupt control request first,
// then SIGINT (which the CLI treats the same), then killing the process
// group, each after StopTimeout without the turn ending. Interrupting an
// idle session is a no-op.
func (s *Session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	proc := s.proc
	busy := s.state == StateBusy || s.state == StateApproval
	s.mu.Unlock()
	if proc == nil || !busy {
		return nil
	}
	if _, err := s.request(ctx, "interrupt", nil); err != nil {
		s.log.Warn().Err(err).Msg("interrupt request failed; escalating")
	}
	if s.waitTurnEnd(ctx, proc, s.cfg.StopTimeout) {
		return nil
	}
	s.log.Warn().Msg("turn still running after interrupt; sending SIGINT")
	_ = proc.cmd.Process.Signal(syscall.SIGINT)
	if s.waitTurnEnd(ctx, proc, s.cfg.StopTimeout) {
		return nil
	}
	s.log.Warn().Msg("turn still running after SIGINT; killing the process group")
	killGroup(proc.pid)
	select {
	case <-proc.exited:
	case <-ctx.Done():
		return fmt.Errorf("interrupt: %w", ctx.Err())
	}
	return nil
}

// waitTurnEnd waits until no turn runs on proc (or it exited).
func (s *Session) waitTurnEnd(ctx context.Context, proc *process, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		done := s.proc != proc || (!s.turnOpen && len(s.approvals) == 0 && len(s.inflight) == 0)
		ch := s.stateCh
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-proc.exited:
			return true
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// SetPermissionMode switches the live process's mode; without a process it
// only changes the mode the next one starts in.
func (s *Session) SetPermissionMode(ctx context.Context, mode PermissionMode) error {
	if !mode.Valid() {
		return fmt.Errorf("set permission mode: %w: %q", ErrInvalidInput, mode)
	}
	if _, err := s.request(ctx, "set_permission_mode", map[string]any{"mode": string(mode)}); err != nil && !errors.Is(err, ErrNoProcess) {
		return fmt.Errorf("set permission mode: %w", err)
	}
	s.mu.Lock()
	s.cfg.PermissionMode = mode
	s.mu.Unlock()
	return nil
}

// SetModel switches the live process's model; without a process it only
// changes the model the next one starts with.
func (s *Session) SetModel(ctx context.Context, model string) error {
	if strings.ContainsAny(model, " \t\n") {
		return fmt.Errorf("set model: %w: %q", ErrInvalidInput, model)
	}
	var fields map[string]any
	if model != "" {
		fields = map[string]any{"model": model}
	}
	if _, err := s.request(ctx, "set_model", fields); err != nil && !errors.Is(err, ErrNoProcess) {
		return fmt.Errorf("set model: %w", err)
	}
	s.mu.Lock()
	s.cfg.Model = model
	s.mu.Unlock()
	return nil
}

// request sends a host → CLI control request and waits for its response.
func (s *Session) request(ctx context.Context, subtype string, fields map[string]any) (json.RawMessage, error) {
	s.mu.Lock()
	proc := s.proc
	if proc == nil {
		s.mu.Unlock()
		return nil, ErrNoProcess
	}
	id := RequestID(fmt.Sprintf("untether-%s-%d", subtype, s.reqSeq.Add(1)))
	ch := make(chan ControlResponseBody, 1)
	s.hostReqs[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.hostReqs, id)
		s.mu.Unlock()
	}()
	line, err := encodeControlRequest(id, subtype, fields)
	if err != nil {
		return nil, err
	}
	if err := s.write(proc, line); err != nil {
		return nil, err
	}
	timer := time.NewTimer(s.cfg.ControlTimeout)
	defer timer.Stop()
	select {
	case resp := <-ch:
		if resp.Subtype != "success" {
			return nil, fmt.Errorf("%w: %s: %s (%s)", ErrControl, subtype, resp.Error, resp.ErrorCode)
		}
		return resp.Response, nil
	case <-proc.exited:
		return nil, fmt.Errorf("%s: %w", subtype, ErrNoProcess)
	case <-timer.C:
		return nil, fmt.Errorf("%s: no response within %s", subtype, s.cfg.ControlTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", subtype, ctx.Err())
	}
}

// write sends one validated line to proc's stdin.
func (s *Session) write(proc *process, line []byte) error {
	if proc == nil {
		return ErrNoProcess
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := proc.stdin.Write(buf); err != nil {
		return fmt.Errorf("write to CLI stdin: %w", err)
	}
	return nil
}

// CloseProcess ends the CLI process gracefully, keeping the session usable:
// closing stdin lets a running turn finish; SIGTERM and then SIGKILL to the
// group follow, each after StopTimeout. The next Send resumes.
func (s *Session) CloseProcess(ctx context.Context) error {
	s.mu.Lock()
	proc := s.proc
	if proc == nil {
		s.mu.Unlock()
		return nil
	}
	proc.requested.Store(true)
	s.setStateLocked(StateStopping)
	s.mu.Unlock()

	s.writeMu.Lock()
	_ = proc.stdin.Close()
	s.writeMu.Unlock()
	if s.waitExit(ctx, proc, s.cfg.StopTimeout) {
		return nil
	}
	s.log.Warn().Msg("CLI did not exit after stdin closed; sending SIGTERM")
	_ = signalGroup(proc.pid, syscall.SIGTERM)
	if s.waitExit(ctx, proc, s.cfg.StopTimeout) {
		return nil
	}
	s.log.Warn().Msg("CLI ignored SIGTERM; killing the process group")
	killGroup(proc.pid)
	if !s.waitExit(ctx, proc, s.cfg.StopTimeout) {
		return fmt.Errorf("close CLI process %d: still running after SIGKILL", proc.pid)
	}
	return nil
}

// waitExit waits until proc was reaped and its exit fully handled.
func (s *Session) waitExit(ctx context.Context, proc *process, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		gone := s.proc != proc
		ch := s.stateCh
		s.mu.Unlock()
		if gone {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Kill SIGKILLs the process group at once, as a crash would. The session
// stays usable; the next Send resumes.
func (s *Session) Kill() {
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if proc != nil {
		proc.requested.Store(true)
		killGroup(proc.pid)
	}
}

// Close ends the process gracefully and closes the event stream.
func (s *Session) Close(ctx context.Context) error {
	err := s.CloseProcess(ctx)
	s.emitMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.events)
	}
	s.emitMu.Unlock()
	s.mu.Lock()
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.mu.Unlock()
	return err
}

// ensureProcess starts a CLI process when none runs.
func (s *Session) ensureProcess(ctx context.Context) error {
	s.spawnMu.Lock()
	defer s.spawnMu.Unlock()
	s.emitMu.RLock()
	closed := s.closed
	s.emitMu.RUnlock()
	if closed {
		return ErrClosed
	}
	s.mu.Lock()
	if s.proc != nil {
		s.mu.Unlock()
		return nil
	}
	s.setStateLocked(StateStarting)
	s.mu.Unlock()

	err := s.spawn(ctx)
	if err != nil {
		s.mu.Lock()
		s.setStateLocked(StateExited)
		s.mu.Unlock()
	}
	return err
}

func (s *Session) args(id SessionID, resume bool) []string {
	args := []string{"-p", "--output-format", "stream-json", "--input-format", "stream-json",
		"--verbose", "--permission-prompt-tool", "stdio", "--permission-mode", string(s.cfg.PermissionMode)}
	if s.cfg.Model != "" {
		args = append(args, "--model", s.cfg.Model)
	}
	if s.cfg.IncludePartialMessages {
		args = append(args, "--include-partial-messages")
	}
	if resume {
		args = append(args, "--resume", string(id))
	} else {
		args = append(args, "--session-id", string(id))
	}
	return append(args, s.cfg.ExtraArgs...)
}

// spawn starts a process; called with spawnMu held.
func (s *Session) spawn(ctx context.Context) error {
	// The spawn slot is held until the CLI has shown it is up (its first
	// stdout line), not just until exec: start-up is ~1 CPU-second, and
	// letting every queued CLI boot at once on a small machine makes all of
	// them slow instead of the first ones fast.
	release := func() {}
	if s.cfg.Pool != nil {
		r, err := s.cfg.Pool.acquire(ctx, s)
		if err != nil {
			return err
		}
		var once sync.Once
		release = func() { once.Do(r) }
	}
	s.mu.Lock()
	id, resume := s.id, s.resume
	args := s.args(id, resume)
	env := BuildEnv(s.cfg.InheritEnv, s.cfg.Env, s.cfg.PermissionMode, os.Geteuid())
	s.mu.Unlock()

	proc, err := s.start(args, env)
	if err != nil {
		release()
		if s.cfg.Pool != nil {
			s.cfg.Pool.processExited(s)
		}
		return err
	}
	proc.started = release
	// A CLI that prints nothing (it waits for input) still frees the slot.
	time.AfterFunc(spawnSlotHold, release)
	proc.resumed = resume
	proc.holding = true
	s.mu.Lock()
	s.proc = proc
	s.resume = true // from now on this id exists (or will, once a turn ran)
	s.setStateLocked(StateIdle)
	s.recomputeStateLocked()
	s.lastActive = time.Now()
	s.mu.Unlock()
	s.log.Info().Int("pid", proc.pid).Bool("resume", resume).Msg("CLI process started")
	s.emit(ProcessStarted{PID: proc.pid, Resumed: resume})
	go s.supervise(proc)
	return nil
}

func (s *Session) start(args, env []string) (*process, error) {
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
	cmd := exec.Command(s.cfg.Binary, args...)
	cmd.Dir = s.cfg.Workdir
	cmd.Env = env
	cmd.Stdin = inR
	// stdout is our own pipe, not StdoutPipe: Wait closes StdoutPipe's read
	// end as soon as the process exits, which can lose its last frames.
	cmd.Stdout = outW
	tail := &tailBuffer{max: 8 << 10}
	cmd.Stderr = tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that inherited stderr must not block Wait forever.
	cmd.WaitDelay = s.cfg.StopTimeout
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start CLI %s: %w", s.cfg.Binary, err)
	}
	inR.Close()
	outW.Close()
	return &process{cmd: cmd, stdin: inW, stdout: outR, pid: cmd.Process.Pid,
		stderr: tail, exited: make(chan struct{})}, nil
}

// supervise reads the process's stdout, reaps it, and handles its exit.
func (s *Session) supervise(proc *process) {
	go func() {
		proc.waitErr = proc.cmd.Wait()
		close(proc.exited)
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.readLoop(proc)
	}()
	select {
	case <-readDone:
		<-proc.exited
	case <-proc.exited:
		// Everything the CLI wrote is in the pipe; only a grandchild holding
		// stdout can keep it open now. Give it StopTimeout, then kill the
		// group, then stop reading.
		select {
		case <-readDone:
		case <-time.After(s.cfg.StopTimeout):
			s.log.Warn().Msg("stdout still open after CLI exit; killing its process group")
			killGroup(proc.pid)
			select {
			case <-readDone:
			case <-time.After(s.cfg.StopTimeout):
				_ = proc.stdout.Close()
				<-readDone
			}
		}
	}
	killGroup(proc.pid) // tools and MCP servers the CLI left behind
	_ = proc.stdout.Close()
	s.processGone(proc)
}

func (s *Session) readLoop(proc *process) {
	lr := newLineReader(proc.stdout)
	var evs []Event
	warned := map[string]bool{}
	defer proc.started()
	for {
		line, err := lr.next()
		proc.started()
		if err != nil {
			return
		}
		if len(line) == 0 {
			continue
		}
		f, derr := decodeLine(line)
		evs = decodeEvents(s.tr, f, derr, line, evs[:0])
		s.observe(proc, f)
		for _, ev := range evs {
			switch e := ev.(type) {
			case Unknown:
				if !warned[e.Kind] {
					warned[e.Kind] = true
					s.log.Warn().Str("kind", e.Kind).Err(e.Err).Int("bytes", len(e.Raw)).Msg("unknown or partly decoded CLI frame; kept raw")
				}
			case Warning:
				s.log.Warn().Err(e.Err).Int("bytes", len(e.Line)).Msg("non-JSON line on CLI stdout")
			}
			s.deliver(proc, ev)
		}
	}
}

// deliver emits ev, or holds it while a resumed process has not yet shown
// that its session id works.
func (s *Session) deliver(proc *process, ev Event) {
	if _, ok := ev.(TurnStarted); ok && proc.holding {
		proc.holding = false
		for _, h := range proc.held {
			s.emit(h)
		}
		proc.held = nil
	}
	if proc.holding {
		proc.held = append(proc.held, ev)
		return
	}
	s.emit(ev)
}

// observe updates supervision state from a frame and answers the control
// requests nobody else will.
func (s *Session) observe(proc *process, f Frame) {
	switch f := f.(type) {
	case *ControlRequestFrame:
		if f.Request.Subtype == "can_use_tool" {
			s.mu.Lock()
			s.approvals[f.RequestID] = f.Request.Input
			s.recomputeStateLocked()
			s.mu.Unlock()
			return
		}
		// Every control request needs an answer or the CLI waits forever.
		s.log.Info().Str("subtype", f.Request.Subtype).Msg("refusing unsupported CLI control request")
		line, err := encodeControlError(f.RequestID, "untether does not support control request "+f.Request.Subtype)
		if err == nil {
			err = s.write(proc, line)
		}
		if err != nil {
			s.log.Warn().Err(err).Msg("answer CLI control request")
		}
	case *ControlCancelFrame:
		s.mu.Lock()
		delete(s.approvals, f.RequestID)
		s.recomputeStateLocked()
		s.mu.Unlock()
	case *ControlResponseFrame:
		s.mu.Lock()
		ch := s.hostReqs[f.Response.RequestID]
		s.mu.Unlock()
		if ch != nil {
			select {
			case ch <- f.Response:
			default:
			}
		}
	case *SystemFrame:
		if f.Subtype == "init" {
			s.mu.Lock()
			proc.sawInit = true
			s.turnOpen = true
			if f.SessionID != "" && SessionID(f.SessionID) != s.id {
				s.log.Info().Str("new_session", f.SessionID).Msg("CLI reports a different session id; adopting it")
				s.id = SessionID(f.SessionID)
			}
			s.recomputeStateLocked()
			s.mu.Unlock()
		}
	case *CommandLifecycleFrame:
		if f.State == string(MessageCompleted) || f.State == string(MessageCancelled) {
			s.mu.Lock()
			delete(s.inflight, f.CommandUUID)
			s.recomputeStateLocked()
			s.mu.Unlock()
		}
	case *ResultFrame:
		s.mu.Lock()
		s.turnOpen = false
		for _, u := range f.UserMessageUUIDs {
			delete(s.inflight, MessageUUID(u))
		}
		s.lastActive = time.Now()
		s.recomputeStateLocked()
		s.mu.Unlock()
	}
}

// Stderr lines that mean the session id cannot be used as asked.
const (
	stderrNoConversation = "No conversation found"
	stderrIDInUse        = "already in use"
)

// processGone finalises a process that was reaped.
func (s *Session) processGone(proc *process) {
	exit := ProcessExited{ExitCode: proc.cmd.ProcessState.ExitCode(), StderrTail: proc.stderr.String(),
		Requested: proc.requested.Load()}
	if ws, ok := proc.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		exit.Signal = ws.Signal().String()
	}
	if s.cfg.Pool != nil {
		s.cfg.Pool.processExited(s)
	}

	s.mu.Lock()
	s.proc = nil
	var withdrawn []RequestID
	for id := range s.approvals {
		withdrawn = append(withdrawn, id)
	}
	clear(s.approvals)
	s.turnOpen = false
	retry := !proc.sawInit && !exit.Requested && len(s.inflight) > 0 &&
		(strings.Contains(exit.StderrTail, stderrNoConversation) || strings.Contains(exit.StderrTail, stderrIDInUse))
	var resend [][]byte
	oldID := s.id
	if retry {
		for _, line := range s.inflight {
			resend = append(resend, line)
		}
		if strings.Contains(exit.StderrTail, stderrIDInUse) {
			s.resume = true // the id exists after all
		} else {
			s.id, s.resume = NewSessionID(), false
			s.log = s.cfg.Logger.With().Str("session", string(s.id)).Logger()
		}
	} else {
		clear(s.inflight)
	}
	s.setStateLocked(StateExited)
	s.mu.Unlock()

	if retry {
		s.log.Warn().Str("previous", string(oldID)).Str("stderr", exit.StderrTail).Msg("session could not be resumed; starting over")
		s.retry(oldID, resend)
		return
	}
	// A process that died before showing its session works: its held
	// frames are the only record of why, so they are delivered now.
	for _, h := range proc.held {
		s.emit(h)
	}
	for _, id := range withdrawn {
		s.emit(ApprovalWithdrawn{RequestID: id})
	}
	lvl := s.log.Info()
	if !exit.Requested {
		lvl = s.log.Warn()
	}
	lvl.Int("pid", proc.pid).Int("exit_code", exit.ExitCode).Str("signal", exit.Signal).Bool("requested", exit.Requested).Msg("CLI process exited")
	s.emit(exit)
}

// retry restarts after an unusable session id and resends the messages the
// dead process never answered.
func (s *Session) retry(oldID SessionID, lines [][]byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.ensureProcess(ctx); err != nil {
		s.log.Error().Err(err).Msg("restart after failed resume")
		s.emit(ProcessExited{ExitCode: -1, StderrTail: err.Error()})
		return
	}
	s.mu.Lock()
	newID, proc := s.id, s.proc
	s.mu.Unlock()
	if newID != oldID {
		s.emit(SessionRestarted{Previous: oldID, Current: newID, Reason: "the previous conversation was not found"})
	}
	for _, line := range lines {
		if err := s.write(proc, line); err != nil {
			s.log.Error().Err(err).Msg("resend message after restart")
		}
	}
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

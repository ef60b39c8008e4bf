package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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
	// StateWaiting: no turn runs, but the CLI has background tasks running
	// or a wake-up pending, and will start a turn by itself (background.go).
	// It is never idle-closed nor evicted for another chat.
	StateWaiting  State = "waiting_background"
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
	// Effort is passed as --effort=<level> when set; "" leaves the CLI's
	// default (effort.go).
	Effort    Effort
	ExtraArgs []string
	// Env is the configured environment table; it wins over InheritEnv.
	Env map[string]string
	// InheritEnv is the daemon's environment (os.Environ()); only the
	// allow-listed variables of it reach the CLI.
	InheritEnv []string
	// IncludePartialMessages streams answer text as TextDelta events.
	IncludePartialMessages bool
	// Continue starts the first process with --continue: the most recent
	// conversation in Workdir, whichever program started it (a terminal,
	// another session). The id the session was made with is replaced by
	// the one the CLI's system/init reports.
	Continue bool
	// Remote runs the CLI on another machine through ssh (remote.go);
	// Binary and Workdir are then that machine's.
	Remote *Remote

	IdleTimeout    time.Duration  // 0: never close an idle process
	StopTimeout    time.Duration  // each step of interrupt and close
	ControlTimeout time.Duration  // host → CLI control requests
	Pool           *Pool          // nil: no spawn or live limits
	Procs          ProcessTracker // nil: processes are not recorded
	Logger         zerolog.Logger
	// MaxBudgetUSD, when set, is asked at each spawn what the process may
	// spend; a positive answer becomes --max-budget-usd, which caps the
	// process's own spending (not the session's, which continues across
	// --resume). Asked at each spawn because a budget changes between them.
	MaxBudgetUSD func() float64

	// Test knobs: a hook that may panic at fault points, and a smaller
	// stdout line limit than MaxLineBytes.
	fault   func(faultPoint)
	maxLine int
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
	closed bool // the events channel is closed

	// workers counts the goroutines that act on the session on their own:
	// each process's supervisor (counted from before its spawn), and idle
	// or eviction closes. Close waits for them, so none of them logs or
	// spawns after Close returned. Add only under mu while !closing.
	workers sync.WaitGroup

	lastOutput atomic.Int64 // monoNow() of the latest stdout line (output.go)
	stopNanos  atomic.Int64 // cfg.StopTimeout, which SetTimeouts may change (session_settings.go)

	spawnMu sync.Mutex // one spawn at a time
	writeMu sync.Mutex // one stdin line at a time

	mu         sync.Mutex
	closing    bool // Close began: no process starts and no worker is added
	id         SessionID
	resume     bool // a process has used id: resume it instead of --session-id
	cont       bool // the next process continues the latest conversation (Config.Continue)
	proc       *process
	state      State
	turnOpen   bool
	approvals  map[RequestID]json.RawMessage // pending can_use_tool → request input
	inflight   map[MessageUUID][]byte        // sent, not answered → the line, for a resend
	hostReqs   map[RequestID]chan ControlResponseBody
	lastActive time.Time
	idleTimer  *time.Timer
	bg         backgroundWork // background tasks and wake-ups (background.go)
	stateCh    chan struct{}  // closed and replaced on every state change
	tr         *Translator

	reqSeq atomic.Uint64
}

// NewSession prepares a session. id is the Claude session id ("" makes
// one; anything but a canonical UUID is refused, see ParseSessionID);
// resume says whether a CLI process has used it before (then --resume, else
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
	} else if _, err := ParseSessionID(string(id)); err != nil {
		return nil, fmt.Errorf("new session: %w", err) // ids.go: never an argument of the CLI's
	}
	if err := CheckModel(cfg.Model); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if err := checkEffort(cfg.Effort); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	s := &Session{
		cfg:       cfg,
		events:    make(chan Event, 256),
		id:        id,
		resume:    resume,
		cont:      cfg.Continue,
		state:     StateExited,
		approvals: make(map[RequestID]json.RawMessage),
		inflight:  make(map[MessageUUID][]byte),
		hostReqs:  make(map[RequestID]chan ControlResponseBody),
		stateCh:   make(chan struct{}),
		tr:        NewTranslator(costBaseline),
	}
	s.stopNanos.Store(int64(cfg.StopTimeout))
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
	case s.bg.pending(time.Now()):
		s.setStateLocked(StateWaiting)
	default:
		s.setStateLocked(StateIdle)
	}
}

func (s *Session) idleExpired() {
	if !s.addWorker() {
		return // Close began; it ends the process
	}
	defer s.workers.Done()
	s.mu.Lock()
	timeout := s.cfg.IdleTimeout
	idle := s.state == StateIdle && timeout > 0 && time.Since(s.lastActive) >= timeout
	s.mu.Unlock()
	if idle {
		s.log.Info().Dur("idle_timeout", timeout).Msg("closing idle CLI process")
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
		if !errors.Is(err, ErrNoProcess) && !s.waitExit(ctx, proc, s.stopTimeout()) {
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

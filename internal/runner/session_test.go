package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLimit bounds every wait in these tests. It is generous on purpose:
// it only decides how long a broken test hangs, never whether it passes.
const waitLimit = 60 * time.Second

// eventLog drains a session's events and lets a test wait for one.
type eventLog struct {
	mu     sync.Mutex
	cond   *sync.Cond
	events []Event
	done   bool
}

func collect(s *Session) *eventLog {
	l := &eventLog{}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		for ev := range s.Events() {
			l.mu.Lock()
			l.events = append(l.events, ev)
			l.cond.Broadcast()
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.done = true
		l.cond.Broadcast()
		l.mu.Unlock()
	}()
	return l
}

// waitFor returns the first event at index >= from matching pred, and its index.
func (l *eventLog) waitFor(t *testing.T, from int, what string, pred func(Event) bool) (Event, int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { l.mu.Lock(); l.cond.Broadcast(); l.mu.Unlock() })
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for i := from; i < len(l.events); i++ {
			if pred(l.events[i]) {
				return l.events[i], i
			}
		}
		if l.done || time.Now().After(deadline) {
			t.Fatalf("no %s event; got %s", what, summarize(l.events))
		}
		l.cond.Wait()
	}
}

func (l *eventLog) snapshot() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

func summarize(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString("\n  " + formatEvent(ev))
	}
	return b.String()
}

func is[T Event](ev Event) bool { _, ok := ev.(T); return ok }

func newFakeSession(t *testing.T, script fakeScript, mutate func(*Config)) (*Session, *eventLog) {
	t.Helper()
	sj, err := json.Marshal(script)
	require.NoError(t, err)
	cfg := Config{
		Binary:      os.Args[0],
		Workdir:     t.TempDir(),
		Env:         map[string]string{fakeCLIEnv: string(sj)},
		InheritEnv:  os.Environ(),
		StopTimeout: 2 * time.Second,
		Logger:      zerolog.New(zerolog.NewTestWriter(t)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	return startSession(t, cfg)
}

// startSession creates a session from cfg, collects its events and closes
// it when the test ends.
func startSession(t *testing.T, cfg Config) (*Session, *eventLog) {
	t.Helper()
	s, err := NewSession(cfg, "", false, 0)
	require.NoError(t, err)
	log := collect(s)
	closeAtEnd(t, s)
	return s, log
}

// closeAtEnd closes s when the test ends. Close returns once the session's
// goroutines are done, so none of them logs to the finished test (its
// zerolog.NewTestWriter); a Close that could not wait fails the test.
func closeAtEnd(t *testing.T, s *Session) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		assert.NoError(t, s.Close(ctx), "close the session")
	})
}

func send(t *testing.T, s *Session, text string) MessageUUID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	id, err := s.Send(ctx, UserInput{Text: text})
	require.NoError(t, err)
	return id
}

func turnDone(ev Event) bool { return is[TurnCompleted](ev) }

func TestSessionArgvAndEnvironment(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, func(c *Config) {
		c.Model = "claude-test"
		c.ExtraArgs = []string{"--add-dir", "/tmp"}
		c.InheritEnv = []string{"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "XDG_CONFIG_HOME=/x",
			"UNTETHER_TELEGRAM_BOT_TOKEN=123:secret", "AWS_SECRET_ACCESS_KEY=nope"}
		c.Env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:1"
	})
	first := s.ID()
	send(t, s, "hello")
	ev, _ := log.waitFor(t, 0, "turn completed", turnDone)
	assert.Equal(t, "echo: hello", ev.(TurnCompleted).Answer)

	raw, err := os.ReadFile(argv)
	require.NoError(t, err)
	args, env, _ := strings.Cut(string(raw), "--env--\n")
	assert.Equal(t, "-p\n--output-format\nstream-json\n--input-format\nstream-json\n--verbose\n--permission-prompt-tool\nstdio\n"+
		"--permission-mode\ndefault\n--model=claude-test\n--session-id="+string(first)+"\n--add-dir\n/tmp\n", args)
	assert.Contains(t, env, "PATH=/usr/bin\n")
	assert.Contains(t, env, "LC_ALL=C\n")
	assert.Contains(t, env, "XDG_CONFIG_HOME=/x\n")
	assert.Contains(t, env, "ANTHROPIC_BASE_URL=http://127.0.0.1:1\n")
	assert.NotContains(t, env, "secret", "the bot token must never reach the CLI")
	assert.NotContains(t, env, "AWS_SECRET")

	// After the process goes away, the next message resumes the same session.
	require.NoError(t, s.CloseProcess(context.Background()))
	exit, _ := log.waitFor(t, 0, "process exited", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, exit.(ProcessExited).Requested)
	assert.Equal(t, StateExited, s.State())
	n := log.len()
	send(t, s, "again")
	log.waitFor(t, n, "second turn", turnDone)
	raw, err = os.ReadFile(argv)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "\n--resume="+string(first)+"\n")
	assert.NotContains(t, string(raw), "--session-id")
	assert.Equal(t, first, s.ID())
}

func TestSessionRejectsManagedExtraArgs(t *testing.T) {
	_, err := NewSession(Config{Binary: "claude", ExtraArgs: []string{"--resume=abc", "--add-dir", "x", "--permission-mode"}}, "", false, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--resume")
	assert.Contains(t, err.Error(), "--permission-mode")
}

func TestSessionSurvivesGarbageAndHugeLines(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "GARBAGE please")
	w, _ := log.waitFor(t, 0, "warning", func(ev Event) bool { return is[Warning](ev) })
	assert.Equal(t, "this is not json", string(w.(Warning).Line))
	ev, i := log.waitFor(t, 0, "turn after garbage", turnDone)
	assert.Equal(t, "after garbage", ev.(TurnCompleted).Answer)

	send(t, s, "HUGE please")
	fin, _ := log.waitFor(t, i+1, "huge tool result", func(ev Event) bool { return is[ToolFinished](ev) })
	assert.Equal(t, "toolu_big", string(fin.(ToolFinished).ID))
	ev, _ = log.waitFor(t, i+1, "turn after huge line", turnDone)
	assert.Equal(t, "after huge", ev.(TurnCompleted).Answer)
}

func TestSessionCostIsPerTurn(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "one")
	ev, i := log.waitFor(t, 0, "turn 1", turnDone)
	assert.InDelta(t, 0.01, ev.(TurnCompleted).CostUSD, 1e-9)
	send(t, s, "two")
	ev, _ = log.waitFor(t, i+1, "turn 2", turnDone)
	assert.InDelta(t, 0.01, ev.(TurnCompleted).CostUSD, 1e-9, "the CLI's total is cumulative; the event carries the delta")
	assert.InDelta(t, 0.02, ev.(TurnCompleted).TotalCostUSD, 1e-9)
	assert.InDelta(t, 0.505, ev.(TurnCompleted).ContextPercent, 1e-9, "(1000 in + 10 out) of 200k")
}

func TestSessionAnswersUnsupportedControlRequests(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "ASKHOST")
	ev, _ := log.waitFor(t, 0, "turn", turnDone)
	assert.Equal(t, "asked host", ev.(TurnCompleted).Answer)
	// The fake CLI dies on anything malformed, so a clean second turn proves
	// the error response we wrote was well-formed.
	send(t, s, "still alive?")
	ev, _ = log.waitFor(t, 0, "second turn", func(ev Event) bool {
		tc, ok := ev.(TurnCompleted)
		return ok && tc.Answer == "echo: still alive?"
	})
	assert.True(t, ev.(TurnCompleted).OK)
}

func TestSessionApprovalRoundTrip(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "APPROVE this")
	ev, _ := log.waitFor(t, 0, "approval", func(ev Event) bool { return is[ApprovalRequested](ev) })
	req := ev.(ApprovalRequested)
	assert.Equal(t, "echo hi", req.Summary)
	assert.Equal(t, StateApproval, s.State())
	assert.ErrorIs(t, s.Respond("nope", Decision{Behavior: Allow}), ErrUnknownRequest)
	require.NoError(t, s.Respond(req.RequestID, Decision{Behavior: Allow, UpdatedPermissions: json.RawMessage(`[{"type":"addRules"}]`)}))
	ev, _ = log.waitFor(t, 0, "turn", turnDone)
	assert.Equal(t, `decision: {"behavior":"allow","updatedInput":{"command":"echo hi"},"updatedPermissions":[{"type":"addRules"}]} for APPROVE this`, ev.(TurnCompleted).Answer)
	assert.ErrorIs(t, s.Respond(req.RequestID, Decision{Behavior: Deny}), ErrUnknownRequest, "an answered request is gone")
}

func TestSessionInvalidInputIsNeverWritten(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	_, err := s.Send(context.Background(), UserInput{})
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = s.Send(context.Background(), UserInput{Text: "x", Images: []Image{{MediaType: "text/html", Data: []byte("<b>")}}})
	assert.ErrorIs(t, err, ErrInvalidInput)
	send(t, s, "APPROVE with bad input")
	ev, _ := log.waitFor(t, 0, "approval", func(ev Event) bool { return is[ApprovalRequested](ev) })
	id := ev.(ApprovalRequested).RequestID
	assert.ErrorIs(t, s.Respond(id, Decision{Behavior: Allow, UpdatedInput: json.RawMessage(`["not an object"]`)}), ErrInvalidInput)
	assert.ErrorIs(t, s.Respond(id, Decision{Behavior: "maybe"}), ErrInvalidInput)
	require.NoError(t, s.Respond(id, Decision{Behavior: Deny, Message: "line\nbreak \"quoted\""}))
	ev, _ = log.waitFor(t, 0, "turn", turnDone)
	assert.Contains(t, ev.(TurnCompleted).Answer, `"behavior":"deny","message":"line\nbreak \"quoted\""`)
}

func TestSessionCrashThenResume(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, nil)
	send(t, s, "CRASH now")
	ev, i := log.waitFor(t, 0, "process exited", func(ev Event) bool { return is[ProcessExited](ev) })
	exit := ev.(ProcessExited)
	assert.False(t, exit.Requested)
	assert.Equal(t, "killed", exit.Signal)
	assert.Equal(t, StateExited, s.State())
	send(t, s, "after crash")
	ev, _ = log.waitFor(t, i, "turn after crash", turnDone)
	assert.Equal(t, "echo: after crash", ev.(TurnCompleted).Answer)
	raw, _ := os.ReadFile(argv)
	assert.Contains(t, string(raw), "\n--resume="+string(s.ID())+"\n")
}

func TestSessionUnknownResumeStartsFresh(t *testing.T) {
	s, err := NewSession(Config{}, "", false, 0)
	require.Error(t, err)
	require.Nil(t, s)

	sj, _ := json.Marshal(fakeScript{UnknownResume: true})
	s, err = NewSession(Config{Binary: os.Args[0], Workdir: t.TempDir(), Env: map[string]string{fakeCLIEnv: string(sj)},
		InheritEnv: os.Environ(), StopTimeout: 2 * time.Second, Logger: zerolog.New(zerolog.NewTestWriter(t))},
		"11111111-1111-4111-8111-111111111111", true, 0)
	require.NoError(t, err)
	log := collect(s)
	closeAtEnd(t, s)
	send(t, s, "hello after loss")
	ev, _ := log.waitFor(t, 0, "session restarted", func(ev Event) bool { return is[SessionRestarted](ev) })
	rs := ev.(SessionRestarted)
	assert.Equal(t, SessionID("11111111-1111-4111-8111-111111111111"), rs.Previous)
	assert.Equal(t, s.ID(), rs.Current)
	ev, _ = log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "echo: hello after loss", ev.(TurnCompleted).Answer, "the message is resent to the new session")
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, ev := range log.events {
		if tc, ok := ev.(TurnCompleted); ok {
			assert.True(t, tc.OK, "the failed resume's own result is not surfaced")
		}
	}
}

func TestSessionIdleCloseThenResume(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
	send(t, s, "one")
	ev, i := log.waitFor(t, 0, "idle close", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, ev.(ProcessExited).Requested)
	send(t, s, "two")
	ev, _ = log.waitFor(t, i, "resumed turn", turnDone)
	assert.Equal(t, "echo: two", ev.(TurnCompleted).Answer)
}

func TestSessionCloseEscalatesToSIGKILL(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{IgnoreSIGTERM: true, HangOnEOF: true}, func(c *Config) { c.StopTimeout = 300 * time.Millisecond })
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	require.NoError(t, s.CloseProcess(context.Background()))
	ev, _ := log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.Equal(t, "killed", ev.(ProcessExited).Signal)
}

func TestSessionInterruptEscalates(t *testing.T) {
	t.Run("interrupt request", func(t *testing.T) {
		s, log := newFakeSession(t, fakeScript{}, nil)
		send(t, s, "SLOW")
		log.waitFor(t, 0, "text", func(ev Event) bool { return is[AssistantText](ev) })
		require.NoError(t, s.Interrupt(context.Background()))
		ev, _ := log.waitFor(t, 0, "aborted turn", turnDone)
		assert.True(t, ev.(TurnCompleted).Aborted())
		assert.Equal(t, StateIdle, s.State())
	})
	t.Run("SIGINT", func(t *testing.T) {
		s, log := newFakeSession(t, fakeScript{IgnoreInterrupt: true}, func(c *Config) {
			c.StopTimeout, c.ControlTimeout = 300*time.Millisecond, 300*time.Millisecond
		})
		send(t, s, "SLOW")
		log.waitFor(t, 0, "text", func(ev Event) bool { return is[AssistantText](ev) })
		require.NoError(t, s.Interrupt(context.Background()))
		ev, _ := log.waitFor(t, 0, "aborted turn", turnDone)
		assert.True(t, ev.(TurnCompleted).Aborted())
	})
	t.Run("group kill", func(t *testing.T) {
		s, log := newFakeSession(t, fakeScript{IgnoreInterrupt: true, IgnoreSIGINT: true}, func(c *Config) {
			c.StopTimeout, c.ControlTimeout = 300*time.Millisecond, 300*time.Millisecond
		})
		send(t, s, "SLOW")
		log.waitFor(t, 0, "text", func(ev Event) bool { return is[AssistantText](ev) })
		require.NoError(t, s.Interrupt(context.Background()))
		ev, _ := log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
		assert.Equal(t, "killed", ev.(ProcessExited).Signal)
	})
}

func TestSessionGrandchildHoldingStdoutIsKilledAndReaped(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	pidFile := filepath.Join(t.TempDir(), "gc.pid")
	s, log := newFakeSession(t, fakeScript{GrandchildPIDFile: pidFile}, func(c *Config) { c.StopTimeout = 300 * time.Millisecond })
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	gc, err := strconv.Atoi(string(raw))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(gc, 0), "grandchild alive while the CLI runs")

	require.NoError(t, s.CloseProcess(context.Background()))
	log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	// Killed and reaped: the pid no longer exists at all (not even a zombie).
	deadline := time.Now().Add(waitLimit)
	for !errors.Is(syscall.Kill(gc, 0), syscall.ESRCH) {
		require.True(t, time.Now().Before(deadline), "grandchild %d still exists", gc)
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSessionSetPermissionMode(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, nil)
	require.NoError(t, s.SetPermissionMode(context.Background(), ModePlan), "without a process it only sets the next spawn's mode")
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	raw, _ := os.ReadFile(argv)
	assert.Contains(t, string(raw), "--permission-mode\nplan\n")
	require.NoError(t, s.SetPermissionMode(context.Background(), ModeAcceptEdits))
	ev, _ := log.waitFor(t, 0, "mode change", func(ev Event) bool { return is[PermissionModeChanged](ev) })
	assert.Equal(t, ModeAcceptEdits, ev.(PermissionModeChanged).Mode)
	assert.ErrorIs(t, s.SetPermissionMode(context.Background(), "yolo"), ErrInvalidInput)
	// The fake refuses set_model like an unknown subtype: the error surfaces.
	assert.ErrorIs(t, s.SetModel(context.Background(), "other"), ErrControl)
}

func TestPoolEvictsLeastRecentlyUsedIdleProcess(t *testing.T) {
	pool := NewPool(1, 2)
	a, alog := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
	b, blog := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
	send(t, a, "a")
	alog.waitFor(t, 0, "a turn", turnDone)
	assert.Equal(t, 1, pool.Live())
	send(t, b, "b")
	blog.waitFor(t, 0, "b turn", turnDone)
	ev, _ := alog.waitFor(t, 0, "a evicted", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, ev.(ProcessExited).Requested)
	assert.Equal(t, 1, pool.Live())
}

// TestBuildEnvNeverAddsSandbox: the CLI refuses bypassPermissions as root
// unless IS_SANDBOX=1; only the operator's [claude] env may set it.
func TestBuildEnvNeverAddsSandbox(t *testing.T) {
	env := BuildEnv([]string{"PATH=/bin", "SECRET=x", "IS_SANDBOX=1"}, map[string]string{"A": "1"})
	assert.Equal(t, []string{"A=1", "PATH=/bin"}, env, "neither added nor inherited")
	env = BuildEnv(nil, map[string]string{"IS_SANDBOX": "1"})
	assert.Equal(t, []string{"IS_SANDBOX=1"}, env, "the operator's own table is honoured")
}

// More sessions than live slots, all sending at once: every message must be
// answered. A freshly started process must not look idle to the pool
// before its message is written (that once lost answers under load).
func TestPoolNeverEvictsAProcessBeforeItsMessage(t *testing.T) {
	pool := NewPool(1, 2)
	type rig struct {
		s   *Session
		log *eventLog
	}
	var rigs []rig
	for i := 0; i < 3; i++ {
		s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
		rigs = append(rigs, rig{s, log})
	}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		for i, r := range rigs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				_, err := r.s.Send(ctx, UserInput{Text: fmt.Sprintf("round %d chat %d", round, i)})
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		for i, r := range rigs {
			want := fmt.Sprintf("echo: round %d chat %d", round, i)
			r.log.waitFor(t, 0, want, func(ev Event) bool { tc, ok := ev.(TurnCompleted); return ok && tc.Answer == want })
		}
	}
}

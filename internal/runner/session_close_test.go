package runner

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateLog is a log sink that records what is written after the test said
// Close returned. Its write of a line containing hold waits up to holdFor
// for that moment, so a supervisor still running after Close is caught
// every time, not only when the scheduler happens to let it run late.
type lateLog struct {
	hold    string
	holdFor time.Duration
	closed  chan struct{} // closed by the test once Close returned

	mu   sync.Mutex
	late []string
}

func newLateLog(hold string) *lateLog {
	return &lateLog{hold: hold, holdFor: time.Second, closed: make(chan struct{})}
}

func (l *lateLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(l.hold)) {
		select {
		case <-l.closed:
		case <-time.After(l.holdFor):
		}
	}
	select {
	case <-l.closed:
		l.mu.Lock()
		l.late = append(l.late, string(p))
		l.mu.Unlock()
	default:
	}
	return len(p), nil
}

func (l *lateLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.late...)
}

// TestSessionCloseWaitsForItsSupervisor: when Close returns, the
// supervisor of the process it ended has finished: its last log line and
// its ProcessExited came before (a test's log writer, or the daemon's at
// shutdown, is not written to afterwards).
func TestSessionCloseWaitsForItsSupervisor(t *testing.T) {
	sink := newLateLog("CLI process exited") // the supervisor's last line
	s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.Logger = zerolog.New(sink) })
	send(t, s, "hello")
	log.waitFor(t, 0, "turn", turnDone)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, s.Close(ctx))
	close(sink.closed)
	time.Sleep(100 * time.Millisecond) // a supervisor still running would write now
	assert.Empty(t, sink.lines(), "nothing is logged after Close returned")
	ev, _ := log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, ev.(ProcessExited).Requested, "the exit is in the stream Close closed")
}

// TestSessionCloseEndsAProcessStartingMeanwhile: a Send that waits for a
// pool slot while Close runs must not start a process that outlives the
// session; its process is ended and Close waits for that.
func TestSessionCloseEndsAProcessStartingMeanwhile(t *testing.T) {
	pool := NewPool(1, 1)
	busy, busyLog := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
	send(t, busy, "SLOW") // a turn that runs: its process is never evicted
	busyLog.waitFor(t, 0, "turn start", func(ev Event) bool { return is[TurnStarted](ev) })

	s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
	sent := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_, err := s.Send(ctx, UserInput{Text: "hello"})
		sent <- err
	}()
	require.Eventually(t, func() bool { return s.State() == StateStarting }, waitLimit, 5*time.Millisecond,
		"the Send waits for the pool's only live slot")
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		closed <- s.Close(ctx)
	}()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.closing }, waitLimit, 5*time.Millisecond)
	busy.Kill() // frees the slot: the waiting Send starts its process now

	require.ErrorIs(t, <-sent, ErrClosed)
	require.NoError(t, <-closed)
	assert.Zero(t, s.PID(), "no process runs after Close")
	assert.Equal(t, StateExited, s.State())
	started, _ := log.waitFor(t, 0, "start", func(ev Event) bool { return is[ProcessStarted](ev) })
	exit, _ := log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, exit.(ProcessExited).Requested)
	_, err := readProcStat(started.(ProcessStarted).PID)
	assert.Error(t, err, "the process it started was killed and reaped")
}

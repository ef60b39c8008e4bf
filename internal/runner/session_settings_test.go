package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionSetTimeoutsReachesALiveProcess: a reloaded idle_timeout closes
// a process that has been idle longer than the new value, and a reloaded
// stop_timeout paces the next close.
func TestSessionSetTimeoutsReachesALiveProcess(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{IgnoreSIGTERM: true, HangOnEOF: true}, func(c *Config) {
		c.IdleTimeout = time.Hour
		c.StopTimeout = time.Hour
	})
	send(t, s, "one")
	_, i := log.waitFor(t, 0, "answer", turnDone)
	start := time.Now()
	s.SetTimeouts(10*time.Millisecond, 100*time.Millisecond)
	ev, _ := log.waitFor(t, i, "idle close", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.True(t, ev.(ProcessExited).Requested)
	// stdin close, SIGTERM (ignored), SIGKILL: three short steps, not hours.
	assert.Less(t, time.Since(start), time.Minute)
}

func TestSessionAdoptsModeAndModel(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	require.NoError(t, s.AdoptPermissionMode(ModePlan))
	require.NoError(t, s.AdoptModel("claude-haiku-4-5"))
	assert.Error(t, s.AdoptPermissionMode("yolo"))
	assert.Error(t, s.AdoptModel("two words"))
	send(t, s, "one")
	log.waitFor(t, 0, "answer", turnDone)
	args := s.args(s.ID(), false)
	assert.Contains(t, args, "plan")
	assert.Contains(t, args, "--model=claude-haiku-4-5")
	live, err := s.TrySetModel(context.Background(), "")
	require.Error(t, err, "the fake CLI refuses set_model")
	assert.False(t, live)
	assert.Equal(t, "claude-haiku-4-5", s.Model(), "a refusal keeps the old model")
}

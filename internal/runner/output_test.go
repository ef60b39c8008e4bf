package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Heartbeats (tool_progress) become no event, yet they are output: a host
// watching for a silent turn must see them.
func TestLastOutputCountsHeartbeats(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	assert.True(t, s.LastOutput().IsZero(), "nothing printed yet")
	send(t, s, "HEARTBEAT")
	_, at := log.waitFor(t, 0, "turn started", is[TurnStarted])
	atStart := s.LastOutput()
	require.False(t, atStart.IsZero())
	// After init the fake prints only heartbeats, every 100 ms, until
	// interrupted: only they can move the clock on.
	require.Eventually(t, func() bool { return s.LastOutput().After(atStart) },
		waitLimit, 10*time.Millisecond, "heartbeats count as output")
	assert.Equal(t, at+1, log.len(), "heartbeats make no event")
}

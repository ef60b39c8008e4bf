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
	log.waitFor(t, 0, "turn started", is[TurnStarted])
	atStart := s.LastOutput()
	require.False(t, atStart.IsZero())
	// After init the fake prints only three heartbeats, 150 ms apart, and
	// nothing else until interrupted: only they can move the clock 400 ms.
	require.Eventually(t, func() bool { return s.LastOutput().Sub(atStart) >= 400*time.Millisecond },
		waitLimit, 10*time.Millisecond, "heartbeats count as output")
	assert.Equal(t, 0, countOf(log, is[TurnCompleted]), "heartbeats make no event")
}

func countOf(l *eventLog, pred func(Event) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.events {
		if pred(ev) {
			n++
		}
	}
	return n
}

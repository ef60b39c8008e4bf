package outbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A greedy caller gets six calls at once, then one a second, and never more
// than burst + span/every calls into any span.
func TestBucketAdmitsABurstThenOnePerInterval(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const every = time.Second
	b := newBucket(6, every, time.Minute)
	now := t0
	var calls []time.Time
	for len(calls) < 40 {
		if d := b.wait(now, false); d > 0 {
			now = now.Add(d)
			continue
		}
		b.add(now)
		calls = append(calls, now)
	}
	assert.Equal(t, t0, calls[5], "six at once")
	assert.Equal(t, t0.Add(every), calls[6], "then one a second")
	for i := range calls {
		for j := i; j < len(calls); j++ {
			span := calls[j].Sub(calls[i])
			assert.LessOrEqual(t, j-i+1, 6+int(span/every), "calls %d..%d in %v", i, j, span)
		}
	}
	assert.Equal(t, now.Add(time.Hour), b.settled(now.Add(time.Hour)))
}

func TestBucketLowWorkLeavesTwoThirds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBucket(6, time.Second, time.Minute)
	b.add(t0)
	b.add(t0)
	assert.Positive(t, b.wait(t0, true), "progress may not take the four kept calls")
	for range 4 {
		assert.Zero(t, b.wait(t0, false), "answers may")
		b.add(t0)
	}
	assert.Equal(t, time.Second, b.wait(t0, false), "an empty bucket refills one a second")
	b.undo(t0)
	assert.Zero(t, b.wait(t0, false), "a call Telegram never saw gives its place back")
}

func TestBucketPenaltyHalvesItForAWhile(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newBucket(6, time.Second, time.Minute)
	b.penalise(t0)
	assert.Equal(t, 3, b.size)
	b.penalise(t0)
	b.penalise(t0)
	assert.Equal(t, 1, b.size, "never below one call")
	b.add(t0)
	assert.Equal(t, time.Second, b.wait(t0, false))
	assert.Zero(t, b.wait(t0.Add(time.Minute), false))
	assert.Equal(t, 6, b.size, "after the memory the full burst is back")
}

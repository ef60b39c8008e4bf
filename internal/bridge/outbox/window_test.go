package outbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWindowNeverAdmitsMoreThanNPerSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWindow(3, time.Second) // 3 per 3 s
	now := t0
	var calls []time.Time
	// Greedy caller, alternating high (keep 0) and low (keep 1) work.
	for i := 0; len(calls) < 30; i++ {
		keep := i % 2
		if d := w.wait(now, keep); d > 0 {
			now = now.Add(d)
			continue
		}
		w.add(now)
		calls = append(calls, now)
	}
	for i := range calls {
		n := 0
		for _, c := range calls[i:] {
			if c.Sub(calls[i]) < 3*time.Second {
				n++
			}
		}
		assert.LessOrEqual(t, n, 3, "calls in the 3 s from %v", calls[i].Sub(t0))
	}
	assert.Zero(t, w.wait(now.Add(time.Hour), 1))
	assert.Equal(t, now.Add(time.Hour), w.settled(now.Add(time.Hour)))
}

func TestWindowKeepsASlotForHighWork(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWindow(3, time.Second)
	w.add(t0)
	w.add(t0)
	assert.Positive(t, w.wait(t0, 1), "low work may not take the last slot")
	assert.Zero(t, w.wait(t0, 0), "high work may")
}

// An album counts as one call per item: it waits until that many slots are
// free, and then counts that many; one bigger than the window goes into an
// empty one.
func TestWindowCountsAnAlbumPerItem(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWindow(10, 100*time.Millisecond) // 10 per second
	for range 5 {
		w.add(t0)
	}
	assert.Zero(t, w.waitN(t0, 0, 5), "five items fit beside five calls")
	assert.Equal(t, time.Second+time.Millisecond, w.waitN(t0, 0, 6), "six wait for the window to move")
	s := w.take(t0, 5)
	assert.Equal(t, 10, w.count(t0))
	release(s, t0.Add(200*time.Millisecond))
	assert.Equal(t, 5, w.count(t0.Add(1100*time.Millisecond)), "the five calls left, the album counts until a second after its response")
	assert.Zero(t, w.waitN(t0.Add(1300*time.Millisecond), 0, 12), "an album bigger than the window goes into an empty one")
}

package outbox

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObservers: RateLimited hears each 429 with its retry_after, Stats
// counts the chat as paused and its queues by priority while it waits,
// and Delivered hears only calls Telegram accepted, each with the time
// of the call that got through.
func TestObservers(t *testing.T) {
	clock := newManualClock()
	var (
		mu        sync.Mutex
		limited   []time.Duration
		delivered []Dispatch
	)
	o, tg := newTestOutbox(t, clock, Options{
		Jitter: func(time.Duration) time.Duration { return 0 },
		RateLimited: func(key ChatKey, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, int64(100), key.Chat)
			limited = append(limited, d)
		},
		Delivered: func(d Dispatch) {
			mu.Lock()
			defer mu.Unlock()
			delivered = append(delivered, d)
		},
	})
	hit := false
	tg.setScript(func(c call) error {
		if c.Chat == 100 && !hit {
			hit = true
			return errTooMany(30)
		}
		return nil
	})
	t0 := clock.Now()
	a := o.Send(bg, ChatKey{Chat: 100}, High, Content{Text: "answer A"}, SendOptions{Tag: "final"})
	waitFor(t, "A's first attempt", func() bool { return len(tg.callsTo(100)) == 1 })
	waitFor(t, "A paused", func() bool { return clock.hasWaiterAt(t0.Add(30 * time.Second)) })
	o.Send(bg, ChatKey{Chat: 100}, Low, Content{Text: "progress"}, SendOptions{Tag: "progress"})
	st := o.Stats()
	assert.Equal(t, 1, st.Paused)
	assert.Equal(t, 1, st.QueuedHigh, "the answer waits for the retry")
	assert.Equal(t, 1, st.QueuedLow)
	assert.Equal(t, 2, st.Queued)
	mu.Lock()
	assert.Equal(t, []time.Duration{30 * time.Second}, limited)
	assert.Empty(t, delivered, "the refused call was not delivered")
	mu.Unlock()

	clock.Advance(30 * time.Second)
	// The progress's enqueue may wake the paused worker, which then waits
	// anew for the pause's end; if it read the fake clock before this
	// Advance and armed its wait after it, that wait ends 30 s later than
	// the pause. Real time has no such gap; here, fire the waits that are
	// left until A goes (failed 1 run in ~100 under -race without this).
	for i := 0; i < 5; i++ {
		if _, _, ok := a.Sent().Peek(); ok {
			break
		}
		time.Sleep(50 * time.Millisecond)
		if _, _, ok := a.Sent().Peek(); !ok {
			clock.AdvanceToNext()
		}
	}
	_, err := await(t, a.Sent())
	require.NoError(t, err)
	// The call that got through.
	retry := tg.callsTo(100)[1]
	for i := 0; i < 60 && len(tg.callsTo(100)) < 3; i++ { // the chat bursts less after its 429: the progress waits for its bucket
		clock.Advance(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, "both delivered", func() bool { mu.Lock(); defer mu.Unlock(); return len(delivered) == 2 })
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "final", delivered[0].Tag)
	assert.Equal(t, "send", delivered[0].Kind)
	assert.Equal(t, t0, delivered[0].Queued)
	// The call that got through, not the refused one: at or after the
	// pause's end, and not after Telegram answered it.
	assert.False(t, delivered[0].Sent.Before(t0.Add(30*time.Second)), "the time of the call that got through")
	assert.False(t, delivered[0].Sent.After(retry.At))
	assert.Equal(t, "progress", delivered[1].Tag)
	assert.Zero(t, o.Stats().Paused)
}

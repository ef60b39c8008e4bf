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
	_, err := await(t, a.Sent())
	require.NoError(t, err)
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
	assert.Equal(t, t0.Add(30*time.Second), delivered[0].Sent, "the time of the call that got through")
	assert.Equal(t, "progress", delivered[1].Tag)
	assert.Zero(t, o.Stats().Paused)
}

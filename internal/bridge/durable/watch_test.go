package durable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// recorder is a Watcher that writes down what it hears.
type recorder struct {
	mu      sync.Mutex
	refused []string
	since   []time.Time
	errs    []error
	saved   int
}

func (r *recorder) WriteRefused(kind string) {
	r.mu.Lock()
	r.refused = append(r.refused, kind)
	r.mu.Unlock()
}
func (r *recorder) Refusing(err error, since time.Time) {
	r.mu.Lock()
	r.errs, r.since = append(r.errs, err), append(r.since, since)
	r.mu.Unlock()
}
func (r *recorder) Saved() { r.mu.Lock(); r.saved++; r.mu.Unlock() }

func (r *recorder) snapshot() (refused []string, episodes, saved int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		err = r.errs[0]
	}
	return append([]string(nil), r.refused...), len(r.errs), r.saved, err
}

// TestWatcherHearsEpisodes: every refused write is heard with its kind,
// the episode once when it starts (with the storage's error) and once when
// every kept write is saved again; the same for a second episode.
func TestWatcherHearsEpisodes(t *testing.T) {
	ctx := context.Background()
	w, full := faultyWrites(t)
	rec := &recorder{}
	w.SetWatcher(rec)
	key := state.ChatKey{Chat: 7}

	full.Store(true)
	require.NoError(t, w.PutChat(ctx, state.Chat{Key: key, SessionID: "s"}))
	require.NoError(t, w.SetLastUpdateID(ctx, 40))
	_, err := w.AddTriggerRun(ctx, state.TriggerRun{Trigger: "ci", Key: key, Prompt: "p"})
	require.ErrorIs(t, err, state.ErrDiskFull, "accepting a run needs its answer now")
	refused, episodes, saved, cause := rec.snapshot()
	assert.Equal(t, []string{"chat", "updates", "trigger"}, refused)
	assert.Equal(t, 1, episodes)
	assert.Zero(t, saved)
	require.ErrorIs(t, cause, state.ErrDiskFull)

	full.Store(false)
	require.Eventually(t, func() bool { _, _, saved, _ := rec.snapshot(); return saved == 1 }, 10*time.Second, 10*time.Millisecond)
	c, err := w.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "s", c.SessionID, "the kept write was saved before Saved was heard")

	full.Store(true)
	require.NoError(t, w.PutChat(ctx, state.Chat{Key: key, SessionID: "t"}))
	full.Store(false)
	require.Eventually(t, func() bool { _, ep, saved, _ := rec.snapshot(); return ep == 2 && saved == 2 }, 10*time.Second, 10*time.Millisecond)
}

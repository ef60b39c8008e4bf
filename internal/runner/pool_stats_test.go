package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolCountsWaiters: a session that finds every live slot taken (by
// a busy process, which is never closed to make room) is counted as
// waiting until it gets a slot, or gives up.
func TestPoolCountsWaiters(t *testing.T) {
	p := NewPool(1, 2)
	busy := &Session{state: StateBusy}
	release, err := p.acquire(context.Background(), busy)
	require.NoError(t, err)
	release()
	assert.Zero(t, p.Stats().Waiting)

	got := make(chan error, 2)
	waiter := func(ctx context.Context) {
		rel, err := p.acquire(ctx, &Session{state: StateStarting})
		if err == nil {
			rel()
		}
		got <- err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go waiter(ctx)
	go waiter(context.Background())
	require.Eventually(t, func() bool { return p.Stats().Waiting == 2 }, 5*time.Second, time.Millisecond)

	cancel() // one gives up
	require.Error(t, <-got)
	assert.Equal(t, 1, p.Stats().Waiting)
	p.processExited(busy) // the slot is free: the other takes it
	require.NoError(t, <-got)
	st := p.Stats()
	assert.Zero(t, st.Waiting)
	assert.Equal(t, 1, st.Live)
}

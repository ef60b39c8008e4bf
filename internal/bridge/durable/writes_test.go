package durable

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// noChats is a daemon without chats.
type noChats struct{}

func (noChats) Busy() []state.ChatKey { return nil }
func (noChats) Refresh(state.ChatKey) {}

// faultyWrites is a Writes over a real store whose writes fail while
// the returned flag is set.
func faultyWrites(t *testing.T) (*Writes, *atomic.Bool) {
	t.Helper()
	st, err := state.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	var full atomic.Bool
	st.InjectWriteFault(func() error {
		if full.Load() {
			return state.ErrDiskFull
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // ends the retry loop
	w := New(st, zerolog.Nop(), noChats{})
	w.Bind(ctx)
	return w, &full
}

// TestKeptWritesKeepTheirOrder: writes refused by a full disk read as
// done; a slot's later writes wait behind its kept ones, a replacing write
// makes the kept ones moot, and once the disk takes writes the result is
// what it would have been without the fault.
func TestKeptWritesKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	w, full := faultyWrites(t)
	key := state.ChatKey{Chat: 7}
	full.Store(true)

	// An approval recorded, shown and decided while the disk is full.
	a := state.Approval{Token: "tok", Key: key, Tool: "Bash", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	require.NoError(t, w.PutApproval(ctx, a))
	require.NoError(t, w.SetApprovalMessage(ctx, "tok", 12))
	full.Store(false) // a later write of the slot still waits behind the kept ones
	require.NoError(t, w.DecideApproval(ctx, "tok", state.DecisionAllow, 1, time.Now(), ""))
	_, err := w.GetApproval(ctx, "tok")
	require.ErrorIs(t, err, state.ErrNotFound, "kept, not yet written")
	full.Store(true)

	// A progress message recorded, then finished: the removal replaces the
	// kept addition even though it fails too.
	require.NoError(t, w.AddLive(ctx, state.LiveMessage{Key: key, MessageID: 5, Kind: state.LiveProgress}))
	require.NoError(t, w.RemoveLive(ctx, key, 5))
	// Sessions: the latest record wins.
	require.NoError(t, w.PutChat(ctx, state.Chat{Key: key, SessionID: "old"}))
	require.NoError(t, w.PutChat(ctx, state.Chat{Key: key, SessionID: "new"}))
	require.NoError(t, w.SetLastUpdateID(ctx, 40))
	require.NoError(t, w.SetLastUpdateID(ctx, 41))
	id, err := w.EnqueueOutbox(ctx, state.OutboxItem{Key: key, Kind: "send"})
	require.NoError(t, err, "a send the journal refuses goes out unjournaled")
	assert.Zero(t, id)
	_, err = w.ContinueApproval(ctx, "tok")
	require.ErrorIs(t, err, state.ErrDiskFull, "a write whose answer is needed now fails")

	w.mu.Lock()
	require.NotNil(t, w.episode)
	assert.Equal(t, map[writeKind]bool{kindApproval: true, kindLive: true, kindChat: true, kindUpdates: true, kindOutbox: true}, w.episode.logged)
	w.mu.Unlock()
	assert.False(t, w.retryKept(), "the disk is still full")

	full.Store(false)
	require.Eventually(t, func() bool { // the retry loop
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.episode == nil && len(w.kept) == 0
	}, 10*time.Second, 5*time.Millisecond)
	got, err := w.GetApproval(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, state.DecisionAllow, got.Decision)
	assert.Equal(t, state.MessageID(12), got.MessageID)
	live, err := w.ListLive(ctx)
	require.NoError(t, err)
	assert.Empty(t, live)
	c, err := w.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "new", c.SessionID)
	off, err := w.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(41), off)
	assert.Empty(t, w.bySlot)
}

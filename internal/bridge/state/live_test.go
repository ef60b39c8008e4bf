package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestLiveMessages(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	got, err := s.ListLive(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)

	a := state.LiveMessage{Key: state.ChatKey{Chat: 1, Thread: 3}, MessageID: 10, Kind: state.LiveProgress, Ref: "turn-1", CreatedAt: t0.Add(time.Second)}
	b := state.LiveMessage{Key: state.ChatKey{Chat: 2}, MessageID: 10, Kind: state.LiveApproval, Ref: "tok", CreatedAt: t0}
	c := state.LiveMessage{Key: state.ChatKey{Chat: 1, Thread: 3}, MessageID: 11, Kind: state.LiveApproval, Ref: "tok2", CreatedAt: t0.Add(2 * time.Second)}
	for _, m := range []state.LiveMessage{a, b, c} {
		require.NoError(t, s.AddLive(ctx, m))
	}
	got, err = s.ListLive(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.LiveMessage{b, a, c}, got, "oldest first; same message id in two chats is two messages")

	// Re-adding replaces: a retried send must not fail on its own record.
	a2 := a
	a2.Ref = "turn-2"
	require.NoError(t, s.AddLive(ctx, a2))

	// Message ids are per chat, so removal ignores the topic.
	require.NoError(t, s.RemoveLive(ctx, state.ChatKey{Chat: 1}, 11))
	got, err = s.ListLive(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.LiveMessage{b, a2}, got)

	require.NoError(t, s.RemoveLive(ctx, b.Key, b.MessageID))
	assert.NoError(t, s.RemoveLive(ctx, b.Key, b.MessageID), "removing twice is fine")
	got, err = s.ListLive(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.LiveMessage{a2}, got)
}

func TestAddLiveDefaultsAndValidation(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	before := time.Now()
	require.NoError(t, s.AddLive(ctx, state.LiveMessage{Key: state.ChatKey{Chat: 1}, MessageID: 1, Kind: state.LiveProgress}))
	got, err := s.ListLive(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.False(t, got[0].CreatedAt.Before(before.Round(0)), "zero CreatedAt means now")

	for _, kind := range []state.LiveKind{"", "answer", "PROGRESS"} {
		err := s.AddLive(ctx, state.LiveMessage{Key: state.ChatKey{Chat: 1}, MessageID: 2, Kind: kind})
		assert.ErrorIs(t, err, state.ErrInvalid, "kind %q", kind)
	}
}

package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// TestPanels: one panel per chat or forum topic, replaced by a newer one,
// kept across a reopen, and refused without a message or a token.
func TestPanels(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	general, topic := state.ChatKey{Chat: -100}, state.ChatKey{Chat: -100, Thread: 4}

	_, err = s.GetPanel(ctx, general)
	require.ErrorIs(t, err, state.ErrNotFound)
	require.NoError(t, s.PutPanel(ctx, state.Panel{Key: general, MessageID: 5, Token: "one", CreatedAt: t0}))
	require.NoError(t, s.PutPanel(ctx, state.Panel{Key: topic, MessageID: 6, Token: "two", Pinned: true, CreatedAt: t0}))
	require.NoError(t, s.PutPanel(ctx, state.Panel{Key: general, MessageID: 7, Token: "three", CreatedAt: t0.Add(time.Minute)}))
	require.ErrorIs(t, s.PutPanel(ctx, state.Panel{Key: general, Token: "x"}), state.ErrInvalid)
	require.ErrorIs(t, s.PutPanel(ctx, state.Panel{Key: general, MessageID: 8}), state.ErrInvalid)
	require.NoError(t, s.Close())

	s, err = state.Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.GetPanel(ctx, general)
	require.NoError(t, err)
	assert.Equal(t, state.Panel{Key: general, MessageID: 7, Token: "three", CreatedAt: t0.Add(time.Minute)}, got, "the newer one replaced it")
	all, err := s.ListPanels(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.Panel{got, {Key: topic, MessageID: 6, Token: "two", Pinned: true, CreatedAt: t0}}, all)

	require.NoError(t, s.DeletePanel(ctx, general))
	require.NoError(t, s.DeletePanel(ctx, general), "deleting none is fine")
	_, err = s.GetPanel(ctx, general)
	require.ErrorIs(t, err, state.ErrNotFound)
}

package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestOutbox(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	assert.Empty(t, pending)

	items := []state.OutboxItem{
		{Key: state.ChatKey{Chat: 1}, Kind: "send", Payload: []byte(`{"text":"a"}`), CreatedAt: t0},
		{Key: state.ChatKey{Chat: 2, Thread: 4}, Kind: "edit", Payload: []byte(`{"text":"b"}`), CreatedAt: t0.Add(-time.Hour)},
		{Key: state.ChatKey{Chat: 1}, Kind: "delete", CreatedAt: t0}, // no payload
	}
	var ids []int64
	for i := range items {
		id, err := s.EnqueueOutbox(ctx, items[i])
		require.NoError(t, err)
		items[i].ID = id
		ids = append(ids, id)
	}
	assert.IsIncreasing(t, ids)

	pending, err = s.PendingOutbox(ctx)
	require.NoError(t, err)
	assert.Equal(t, items, pending, "id order, not CreatedAt order")

	require.NoError(t, s.BumpOutboxAttempt(ctx, ids[1]))
	require.NoError(t, s.BumpOutboxAttempt(ctx, ids[1]))
	require.NoError(t, s.AckOutbox(ctx, ids[0]))
	pending, err = s.PendingOutbox(ctx)
	require.NoError(t, err)
	want1 := items[1]
	want1.Attempts = 2
	assert.Equal(t, []state.OutboxItem{want1, items[2]}, pending)

	assert.ErrorIs(t, s.AckOutbox(ctx, ids[0]), state.ErrNotFound, "double ack is reported")
	assert.ErrorIs(t, s.BumpOutboxAttempt(ctx, ids[0]), state.ErrNotFound)
	assert.ErrorIs(t, s.AckOutbox(ctx, 999), state.ErrNotFound)

	// Acking the newest item must not let its id be handed out again, or a
	// late duplicate ack would delete the new item.
	require.NoError(t, s.AckOutbox(ctx, ids[2]))
	next, err := s.EnqueueOutbox(ctx, state.OutboxItem{Key: state.ChatKey{Chat: 1}, Kind: "send", Payload: []byte("x")})
	require.NoError(t, err)
	assert.Greater(t, next, ids[2])
}

func TestEnqueueOutboxDefaultsAndValidation(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	_, err := s.EnqueueOutbox(ctx, state.OutboxItem{Key: state.ChatKey{Chat: 1}, Payload: []byte("x")})
	assert.ErrorIs(t, err, state.ErrInvalid, "kind is required")

	before := time.Now().Round(0)
	_, err = s.EnqueueOutbox(ctx, state.OutboxItem{Key: state.ChatKey{Chat: 1}, Kind: "send", Payload: []byte("x"), Attempts: 3})
	require.NoError(t, err)
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.False(t, pending[0].CreatedAt.Before(before), "zero CreatedAt means now")
	assert.Equal(t, 3, pending[0].Attempts, "attempts carried over, e.g. when re-journaling")
}

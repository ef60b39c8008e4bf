package state_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestHandledUpdatesAboveOffset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	for _, id := range []int64{5, 7, 9} {
		require.NoError(t, s.MarkUpdateHandled(ctx, id))
	}
	require.NoError(t, s.MarkUpdateHandled(ctx, 7), "marking twice is harmless")
	require.NoError(t, s.Close())

	s, err = state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	ids, err := s.HandledUpdatesAbove(ctx, 6)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 9}, ids, "survives a restart; at or below the offset is covered by it")
	ids, err = s.HandledUpdatesAbove(ctx, 3)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 9}, ids, "pruned ids stay pruned")
}

func TestDeferredUpdatesSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, s.DeferUpdate(ctx, state.DeferredUpdate{UpdateID: 9, Payload: []byte(`{"update_id":9}`)}))
	require.NoError(t, s.DeferUpdate(ctx, state.DeferredUpdate{UpdateID: 7, Payload: []byte(`{"update_id":7}`)}))
	require.NoError(t, s.Close())
	s, err = state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.DeferredUpdates(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, int64(7), got[0].UpdateID)
	require.Equal(t, `{"update_id":9}`, string(got[1].Payload))
	require.NoError(t, s.ForgetDeferredUpdate(ctx, 7))
	require.NoError(t, s.ForgetDeferredUpdate(ctx, 7), "forgetting twice is harmless")
	got, err = s.DeferredUpdates(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, int64(9), got[0].UpdateID)
}

package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestLostWakeupIsRearmedOnce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 7, Thread: 3}
	w := state.LostWakeup{Token: "tok", Key: key, SessionID: "sid", Project: "api", Branch: "main",
		Wakeup: []byte(`{"Tool":"ScheduleWakeup"}`), Why: "untether restarted"}
	require.NoError(t, s.PutLostWakeup(ctx, w))
	got, err := s.GetLostWakeup(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, key, got.Key)
	assert.Equal(t, "sid", got.SessionID)
	assert.Equal(t, "api", got.Project)
	assert.Equal(t, "main", got.Branch)
	assert.JSONEq(t, `{"Tool":"ScheduleWakeup"}`, string(got.Wakeup))
	assert.Equal(t, "untether restarted", got.Why)
	assert.False(t, got.Rearmed)
	assert.False(t, got.CreatedAt.IsZero())

	ok, err := s.RearmLostWakeup(ctx, "tok", 42)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.RearmLostWakeup(ctx, "tok", 43)
	require.NoError(t, err)
	assert.False(t, ok, "the first press wins")
	got, err = s.GetLostWakeup(ctx, "tok")
	require.NoError(t, err)
	assert.True(t, got.Rearmed)
	assert.Equal(t, state.UserID(42), got.DecidedBy)

	_, err = s.GetLostWakeup(ctx, "nope")
	assert.ErrorIs(t, err, state.ErrNotFound)
	assert.ErrorIs(t, s.PutLostWakeup(ctx, state.LostWakeup{Token: "x"}), state.ErrInvalid)

	p, err := s.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, int64(1), p.LostWakeups)
	_, err = s.GetLostWakeup(ctx, "tok")
	assert.ErrorIs(t, err, state.ErrNotFound)
}

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
		Wakeup: []byte(`{"Tool":"ScheduleWakeup"}`), Why: "untether restarted", State: state.WakeupOffered}
	require.NoError(t, s.PutLostWakeup(ctx, w))
	got, err := s.GetLostWakeup(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, key, got.Key)
	assert.Equal(t, "sid", got.SessionID)
	assert.Equal(t, "api", got.Project)
	assert.Equal(t, "main", got.Branch)
	assert.JSONEq(t, `{"Tool":"ScheduleWakeup"}`, string(got.Wakeup))
	assert.Equal(t, "untether restarted", got.Why)
	assert.Equal(t, state.WakeupOffered, got.State)
	assert.False(t, got.CreatedAt.IsZero())

	ok, err := s.RearmLostWakeup(ctx, "tok", 42)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.RearmLostWakeup(ctx, "tok", 43)
	require.NoError(t, err)
	assert.False(t, ok, "the first press wins")
	got, err = s.GetLostWakeup(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, state.WakeupRearmed, got.State)
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

// A wake-up is pending while its CLI waits; a close offers it, a fire
// forgets it, and pending rows outlive the retention period (a start after
// a kill needs them).
func TestPendingWakeupsAreOfferedOrForgotten(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 7}
	for _, tok := range []string{"a", "b", "c"} {
		require.NoError(t, s.PutLostWakeup(ctx, state.LostWakeup{Token: tok, Key: key, SessionID: "sid",
			Wakeup: []byte(`{}`), State: state.WakeupPending}))
	}
	ok, err := s.RearmLostWakeup(ctx, "a", 1)
	require.NoError(t, err)
	assert.False(t, ok, "a pending wake-up has no button to press yet")
	ok, err = s.OfferLostWakeup(ctx, "a", "/new")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.OfferLostWakeup(ctx, "a", "/new")
	require.NoError(t, err)
	assert.False(t, ok, "offered once")
	require.NoError(t, s.ForgetPendingWakeup(ctx, "b"))
	require.NoError(t, s.ForgetPendingWakeup(ctx, "a"), "an offered one is not forgotten")
	_, err = s.GetLostWakeup(ctx, "b")
	assert.ErrorIs(t, err, state.ErrNotFound)
	got, err := s.GetLostWakeup(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, "/new", got.Why)

	_, err = s.Prune(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	pending, err := s.PendingWakeups(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, "c", pending[0].Token)
	assert.ErrorIs(t, s.PutLostWakeup(ctx, state.LostWakeup{Token: "d", Key: key, SessionID: "sid", Wakeup: []byte(`{}`)}),
		state.ErrInvalid, "a state is required")
}

package state_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// writes is every write the daemon makes, for the fault tests: each must
// fail cleanly while the storage refuses writes and work again after.
func writes(key state.ChatKey) []struct {
	name string
	do   func(context.Context, *state.Store) error
} {
	return []struct {
		name string
		do   func(context.Context, *state.Store) error
	}{
		{"offset", func(ctx context.Context, s *state.Store) error { return s.SetLastUpdateID(ctx, 77) }},
		{"handled", func(ctx context.Context, s *state.Store) error { return s.MarkUpdateHandled(ctx, 80) }},
		{"defer", func(ctx context.Context, s *state.Store) error {
			return s.DeferUpdate(ctx, state.DeferredUpdate{UpdateID: 78, Payload: []byte(`{}`)})
		}},
		{"chat", func(ctx context.Context, s *state.Store) error {
			return s.PutChat(ctx, state.Chat{Key: key, SessionID: "sess"})
		}},
		{"live", func(ctx context.Context, s *state.Store) error {
			return s.AddLive(ctx, state.LiveMessage{Key: key, MessageID: 5, Kind: state.LiveProgress})
		}},
		{"approval", func(ctx context.Context, s *state.Store) error {
			return s.PutApproval(ctx, sampleApproval("tok", key, t0))
		}},
		{"decision", func(ctx context.Context, s *state.Store) error {
			return s.DecideApproval(ctx, "tok", state.DecisionAllow, 1, t0, "")
		}},
		{"turn", func(ctx context.Context, s *state.Store) error {
			return s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: t0, Duration: time.Second, OK: true})
		}},
		{"outbox", func(ctx context.Context, s *state.Store) error {
			_, err := s.EnqueueOutbox(ctx, state.OutboxItem{Key: key, Kind: "send", Payload: []byte("x")})
			return err
		}},
		{"process", func(ctx context.Context, s *state.Store) error {
			return s.PutCLIProc(ctx, state.CLIProc{Tag: "t", PID: 1, StartTime: 2})
		}},
		{"probe", func(ctx context.Context, s *state.Store) error { return s.CheckWritable(ctx) }},
	}
}

// TestInjectedWriteFault: while a write fault is injected every write fails
// with ErrDiskFull (an ErrStorage) and changes nothing, reads still work,
// and once it is removed the same writes go through.
func TestInjectedWriteFault(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 42}
	var full atomic.Bool
	full.Store(true)
	s.InjectWriteFault(func() error {
		if full.Load() {
			return state.ErrDiskFull
		}
		return nil
	})
	for _, w := range writes(key) {
		err := w.do(ctx, s)
		assert.ErrorIs(t, err, state.ErrDiskFull, w.name)
		assert.ErrorIs(t, err, state.ErrStorage, w.name)
	}
	_, err := s.GetChat(ctx, key)
	require.ErrorIs(t, err, state.ErrNotFound, "reads work, and the failed write left nothing")
	_, err = s.HandledUpdatesAbove(ctx, 0)
	require.NoError(t, err, "what a start reads works on a full disk (its pruning waits)")
	off, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Zero(t, off)

	full.Store(false)
	for _, w := range writes(key) {
		assert.NoError(t, w.do(ctx, s), w.name)
	}
	c, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "sess", c.SessionID)

	s.InjectWriteFault(nil)
	assert.NoError(t, s.CheckWritable(ctx))
	handled, err := s.HandledUpdatesAbove(ctx, -10)
	require.NoError(t, err)
	assert.Equal(t, []int64{80}, handled, "the probe leaves no row behind")
}

func TestErrDiskFullIsErrStorage(t *testing.T) {
	assert.ErrorIs(t, state.ErrDiskFull, state.ErrStorage)
	assert.ErrorIs(t, state.ErrReadOnly, state.ErrStorage)
	assert.NotErrorIs(t, state.ErrNotFound, state.ErrStorage)
}

func TestFreeBytes(t *testing.T) {
	s := newStore(t)
	free, err := s.FreeBytes()
	require.NoError(t, err)
	assert.Positive(t, free)
}

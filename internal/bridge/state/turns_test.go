package state_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestRecordTurnAccumulates(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 10, Thread: 3}

	// No PutChat first: the turn creates the chat row.
	r1 := state.TurnRecord{Key: key, SessionID: "s1", StartedAt: t0, Duration: 90 * time.Second,
		CostUSD: 0.125, ContextPct: 12.5, OK: true, TerminalReason: "completed"}
	require.NoError(t, s.RecordTurn(ctx, r1))
	c, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, state.Chat{Key: key, SessionID: "s1", LastActive: t0.Add(90 * time.Second), CostUSD: 0.125, Turns: 1}, c)

	require.NoError(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: "s2", Model: "opus", LastActive: t0.Add(time.Hour)}))
	// An older turn (recorded late) adds cost but does not move LastActive back.
	r2 := state.TurnRecord{Key: key, SessionID: "s2", StartedAt: t0.Add(10 * time.Minute), Duration: time.Second,
		CostUSD: 0.25, ContextPct: 40, OK: false, TerminalReason: "max_turns"}
	require.NoError(t, s.RecordTurn(ctx, r2))
	c, err = s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, state.Chat{Key: key, SessionID: "s2", Model: "opus", LastActive: t0.Add(time.Hour), CostUSD: 0.375, Turns: 2}, c)

	turns, err := s.RecentTurns(ctx, key, 0)
	require.NoError(t, err)
	assert.Equal(t, []state.TurnRecord{r2, r1}, turns, "newest first")
	turns, err = s.RecentTurns(ctx, key, 1)
	require.NoError(t, err)
	assert.Equal(t, []state.TurnRecord{r2}, turns)
	turns, err = s.RecentTurns(ctx, state.ChatKey{Chat: 10}, 0)
	require.NoError(t, err)
	assert.Empty(t, turns, "the topic-less chat is another conversation")
}

func TestRecordTurnZeroStart(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 1}
	before := time.Now().Round(0)
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, Duration: time.Minute}))
	turns, err := s.RecentTurns(ctx, key, 0)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	assert.False(t, turns[0].StartedAt.Add(time.Minute).Before(before), "a zero start means the turn ended now")
}

func TestRecordTurnInvalid(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 1}
	tests := []struct {
		name string
		rec  state.TurnRecord
	}{
		{"negative cost", state.TurnRecord{Key: key, StartedAt: t0, CostUSD: -0.01}},
		{"NaN cost", state.TurnRecord{Key: key, StartedAt: t0, CostUSD: math.NaN()}},
		{"infinite cost", state.TurnRecord{Key: key, StartedAt: t0, CostUSD: math.Inf(1)}},
		{"negative duration", state.TurnRecord{Key: key, StartedAt: t0, Duration: -time.Second}},
		{"NaN context", state.TurnRecord{Key: key, StartedAt: t0, ContextPct: math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, s.RecordTurn(ctx, tt.rec), state.ErrInvalid)
		})
	}
	_, err := s.GetChat(ctx, key)
	assert.ErrorIs(t, err, state.ErrNotFound, "rejected turns leave no trace")
}

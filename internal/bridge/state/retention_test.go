package state_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestPruneKeepsWhatRetentionAsks(t *testing.T) {
	ctx := context.Background()
	s, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	now := time.Now()
	old, recent := now.Add(-100*24*time.Hour), now.Add(-time.Hour)
	key := state.ChatKey{Chat: 1}
	require.NoError(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: "s"}))
	for tok, at := range map[string]time.Time{"old-decided": old, "old-pending": old, "recent-decided": recent} {
		require.NoError(t, s.PutApproval(ctx, state.Approval{Token: tok, Key: key, RequestID: tok, Tool: "Bash", CreatedAt: at}))
		if strings.HasSuffix(tok, "decided") {
			require.NoError(t, s.DecideApproval(ctx, tok, state.DecisionAllow, 1, at, ""))
		}
	}
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: old, OK: true}))
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: recent, OK: true}))
	require.NoError(t, s.SetLastUpdateID(ctx, 10))
	for _, id := range []int64{5, 12} {
		require.NoError(t, s.MarkUpdateHandled(ctx, id))
	}

	p, err := s.Prune(ctx, now.Add(-90*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, state.Pruned{Approvals: 1, Turns: 1, HandledUpdates: 1}, p)
	_, err = s.GetApproval(ctx, "old-decided")
	assert.ErrorIs(t, err, state.ErrNotFound)
	for _, tok := range []string{"old-pending", "recent-decided"} {
		_, err = s.GetApproval(ctx, tok)
		assert.NoError(t, err, "%s is kept", tok)
	}
	turns, err := s.RecentTurns(ctx, key, 10)
	require.NoError(t, err)
	assert.Len(t, turns, 1)
	ids, err := s.HandledUpdatesAbove(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, []int64{12}, ids, "marks above the offset are still needed")
	c, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "s", c.SessionID, "chats are never pruned")
}

func TestApprovalInputIsCapped(t *testing.T) {
	ctx := context.Background()
	s, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	big, err := json.Marshal(map[string]string{"file_path": "/x", "content": strings.Repeat("é", 40<<10)})
	require.NoError(t, err)
	small := []byte(`{"command":"ls"}`)
	require.NoError(t, s.PutApproval(ctx, state.Approval{Token: "big", Key: state.ChatKey{Chat: 1}, RequestID: "r1", InputJSON: big}))
	require.NoError(t, s.PutApproval(ctx, state.Approval{Token: "small", Key: state.ChatKey{Chat: 1}, RequestID: "r2", InputJSON: small}))
	a, err := s.GetApproval(ctx, "big")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(a.InputJSON), state.MaxStoredInput)
	var got map[string]any
	require.NoError(t, json.Unmarshal(a.InputJSON, &got), "still valid JSON")
	assert.Equal(t, true, got["untether_truncated"])
	assert.EqualValues(t, len(big), got["bytes"])
	b, err := s.GetApproval(ctx, "small")
	require.NoError(t, err)
	assert.JSONEq(t, string(small), string(b.InputJSON), "small inputs are kept whole")
}

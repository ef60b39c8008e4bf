package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestContinueApprovalOnlyOnceAndOnlyInterrupted(t *testing.T) {
	ctx := context.Background()
	s, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	key := state.ChatKey{Chat: 1}
	for _, tok := range []string{"interrupted", "allowed", "pending"} {
		require.NoError(t, s.PutApproval(ctx, state.Approval{Token: tok, Key: key, RequestID: "r-" + tok, Tool: "Bash"}))
	}
	require.NoError(t, s.DecideApproval(ctx, "interrupted", state.DecisionInterrupted, 0, time.Now(), "untether restarted"))
	require.NoError(t, s.DecideApproval(ctx, "allowed", state.DecisionAllow, 7, time.Now(), ""))

	ok, err := s.ContinueApproval(ctx, "interrupted")
	require.NoError(t, err)
	require.True(t, ok, "the first press continues")
	ok, err = s.ContinueApproval(ctx, "interrupted")
	require.NoError(t, err)
	require.False(t, ok, "a second press does nothing")
	for _, tok := range []string{"allowed", "pending", "unknown"} {
		ok, err = s.ContinueApproval(ctx, tok)
		require.NoError(t, err)
		require.False(t, ok, tok)
	}
}

package bridge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
)

// The daemon prunes what [state] retention no longer keeps when it starts:
// an approval decided long ago is gone, a recent one stays.
func TestOldStateIsPrunedAtStart(t *testing.T) {
	r := newRig(t, withConfig(func(c *config.Config) { c.State.Retention = config.Duration(24 * time.Hour) }))
	<-r.ready
	r.stop()
	ctx := context.Background()
	s, err := state.Open(ctx, r.dir)
	require.NoError(t, err)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	for tok, at := range map[string]time.Time{"ancient": time.Now().Add(-48 * time.Hour), "fresh": time.Now()} {
		require.NoError(t, s.PutApproval(ctx, state.Approval{Token: tok, Key: key, RequestID: tok, Tool: "Bash", CreatedAt: at}))
		require.NoError(t, s.DecideApproval(ctx, tok, state.DecisionDeny, 1, at, ""))
	}
	require.NoError(t, s.Close())

	r.start()
	require.Eventually(t, func() bool {
		_, err := r.store.GetApproval(ctx, "ancient")
		return err != nil
	}, wait, 20*time.Millisecond, "the approval older than the retention is pruned")
	_, err = r.store.GetApproval(ctx, "fresh")
	require.NoError(t, err, "a recent one stays")
}

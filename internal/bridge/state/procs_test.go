package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestCLIProcsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	a := state.CLIProc{Tag: "a", PID: 100, StartTime: 1 << 40, StartedAt: at}
	b := state.CLIProc{Tag: "b", PID: 200, StartTime: 7, StartedAt: at.Add(time.Second)}
	require.NoError(t, s.PutCLIProc(ctx, b))
	require.NoError(t, s.PutCLIProc(ctx, a))
	require.NoError(t, s.PutCLIProc(ctx, state.CLIProc{Tag: "gone", PID: 300, StartTime: 9}))
	require.NoError(t, s.DeleteCLIProc(ctx, "gone"))
	require.NoError(t, s.DeleteCLIProc(ctx, "never recorded"), "forgetting twice is harmless")
	require.NoError(t, s.Close())

	s, err = state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.CLIProcs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.CLIProc{a, b}, got, "oldest first, start times exact")
}

package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// TestTriggerRunsSurviveReopen: accepted runs are kept, oldest first,
// across a reopen of the database, until finished.
func TestTriggerRunsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	a := state.TriggerRun{Trigger: "ci-failed", Key: state.ChatKey{Chat: 1001}, Prompt: "CI failed", Delivery: "d-1",
		Event: "workflow_run", Created: t0}
	b := state.TriggerRun{Trigger: "new_issue", Key: state.ChatKey{Chat: -100, Thread: 7}, Project: "api", Prompt: "New issue",
		Created: t0.Add(time.Second)}
	var err error
	a.ID, err = s.AddTriggerRun(ctx, a)
	require.NoError(t, err)
	b.ID, err = s.AddTriggerRun(ctx, b)
	require.NoError(t, err)
	_, err = s.AddTriggerRun(ctx, state.TriggerRun{Trigger: "x"})
	require.ErrorIs(t, err, state.ErrInvalid, "a run without a prompt")
	require.NoError(t, s.Close())

	s = openStore(t, dir)
	runs, err := s.TriggerRuns(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.TriggerRun{a, b}, runs)
	require.NoError(t, s.FinishTriggerRun(ctx, a.ID))
	require.NoError(t, s.FinishTriggerRun(ctx, a.ID), "finishing twice is harmless")
	runs, err = s.TriggerRuns(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.TriggerRun{b}, runs)
}

// TestWebhookKeys: a key is fresh once per window, across a reopen; a
// released key is fresh again; keys older than the window are forgotten.
func TestWebhookKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	const window = time.Hour
	claim := func(s *state.Store, key string, at time.Time) bool {
		t.Helper()
		fresh, err := s.ClaimWebhookKey(ctx, key, at, window)
		require.NoError(t, err)
		return fresh
	}
	assert.True(t, claim(s, "delivery:ci:1", t0))
	assert.False(t, claim(s, "delivery:ci:1", t0.Add(time.Minute)), "a replay within the window")
	assert.True(t, claim(s, "delivery:ci:2", t0.Add(time.Minute)), "another key")
	require.NoError(t, s.Close())

	s = openStore(t, dir)
	assert.False(t, claim(s, "delivery:ci:1", t0.Add(2*time.Minute)), "a replay after a restart")
	require.NoError(t, s.ReleaseWebhookKey(ctx, "delivery:ci:2"))
	assert.True(t, claim(s, "delivery:ci:2", t0.Add(3*time.Minute)), "released: the sender's retry runs")
	assert.True(t, claim(s, "delivery:ci:1", t0.Add(window+time.Second)), "past the window it runs again")
	_, err := s.ClaimWebhookKey(ctx, "", t0, window)
	require.ErrorIs(t, err, state.ErrInvalid)
}

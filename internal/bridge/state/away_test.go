package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestTurnsSinceAndCostSince(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	a, b := state.ChatKey{Chat: 1}, state.ChatKey{Chat: -100, Thread: 4}
	turns := []state.TurnRecord{
		{Key: a, StartedAt: t0.Add(-48 * time.Hour), CostUSD: 1, InputTokens: 10, OutputTokens: 1, OK: true},
		{Key: a, StartedAt: t0, CostUSD: 0.25, InputTokens: 1000, OutputTokens: 20, CacheReadTokens: 5, CacheWriteTokens: 7, OK: true},
		{Key: b, StartedAt: t0.Add(time.Hour), CostUSD: 0.5, InputTokens: 2000, OutputTokens: 40, OK: false},
	}
	for _, r := range turns {
		require.NoError(t, s.RecordTurn(ctx, r))
	}
	got, err := s.TurnsSince(ctx, t0)
	require.NoError(t, err)
	assert.Equal(t, turns[1:], got, "oldest first, tokens kept, every chat")
	cost, err := s.CostSince(ctx, t0)
	require.NoError(t, err)
	assert.InDelta(t, 0.75, cost, 1e-9)
	cost, err = s.CostSince(ctx, t0.Add(2*time.Hour))
	require.NoError(t, err)
	assert.Zero(t, cost)
	recent, err := s.RecentTurns(ctx, a, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), recent[0].InputTokens)
}

func TestLimitWindowsReplace(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	w5 := state.LimitWindow{Type: "five_hour", Status: "allowed", Utilization: 0.4, ResetsAt: t0.Add(time.Hour), UpdatedAt: t0}
	w7 := state.LimitWindow{Type: "seven_day", Status: "allowed", Utilization: 0.1, ResetsAt: t0.Add(50 * time.Hour), UpdatedAt: t0}
	require.NoError(t, s.PutLimitWindows(ctx, []state.LimitWindow{w5, w7}))
	w5.Utilization, w5.Status, w5.UpdatedAt = 0.9, "allowed_warning", t0.Add(time.Minute)
	require.NoError(t, s.PutLimitWindows(ctx, []state.LimitWindow{w5}))
	got, err := s.LimitWindows(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.LimitWindow{w5, w7}, got)
}

func TestSettingSwapOnce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	_, ok, err := s.Setting(ctx, "x")
	require.NoError(t, err)
	assert.False(t, ok)
	changed, err := s.SwapSetting(ctx, "x", "2026-11-30")
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = s.SwapSetting(ctx, "x", "2026-11-30")
	require.NoError(t, err)
	assert.False(t, changed, "the same value a second time is no change")
	require.NoError(t, s.SetSetting(ctx, "x", "later"))
	v, ok, err := s.Setting(ctx, "x")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "later", v)
}

func TestRetryLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	r := state.Retry{Token: "tok", Key: state.ChatKey{Chat: 5}, ReplyTo: 9, Input: []byte(`{"Text":"hi"}`), Label: "hi", Window: "five_hour",
		Project: "api", Branch: "feat", CreatedBy: 2001, ResetsAt: t0.Add(time.Hour), State: state.RetryAsked, CreatedAt: t0}
	require.NoError(t, s.PutRetry(ctx, r))
	assert.ErrorIs(t, s.PutRetry(ctx, state.Retry{Token: "bad"}), state.ErrInvalid)
	require.NoError(t, s.SetRetryMessage(ctx, "tok", 12))

	_, ok, err := s.NextRetry(ctx)
	require.NoError(t, err)
	assert.False(t, ok, "an asked retry is not scheduled")
	moved, err := s.DecideRetry(ctx, "tok", state.RetryScheduled, 77, state.RetryAsked)
	require.NoError(t, err)
	assert.True(t, moved)
	moved, err = s.DecideRetry(ctx, "tok", state.RetryScheduled, 78, state.RetryAsked)
	require.NoError(t, err)
	assert.False(t, moved, "decided once")

	require.NoError(t, s.Close())
	s = openStore(t, dir) // survives a restart
	at, ok, err := s.NextRetry(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, at.Equal(r.ResetsAt))
	due, err := s.DueRetries(ctx, t0)
	require.NoError(t, err)
	assert.Empty(t, due)
	due, err = s.DueRetries(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, due, 1)
	want := r
	want.MessageID, want.State, want.DecidedBy = 12, state.RetryScheduled, 77
	assert.Equal(t, want, due[0])

	moved, err = s.DecideRetry(ctx, "tok", state.RetrySent, 0, state.RetryScheduled)
	require.NoError(t, err)
	assert.True(t, moved)
	moved, err = s.DecideRetry(ctx, "tok", state.RetryDropped, 1, state.RetryAsked, state.RetryScheduled)
	require.NoError(t, err)
	assert.False(t, moved, "a sent retry cannot be dropped")
	got, err := s.GetRetry(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, state.RetrySent, got.State)
	_, err = s.GetRetry(ctx, "nope")
	assert.ErrorIs(t, err, state.ErrNotFound)
}

func TestSchedules(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	key := state.ChatKey{Chat: 5, Thread: 2}
	once := state.Schedule{Key: key, Prompt: "later", NextRun: t0.Add(30 * time.Minute), CreatedBy: 5, CreatedAt: t0}
	id1, err := s.AddSchedule(ctx, once, 2)
	require.NoError(t, err)
	daily := state.Schedule{Key: key, Cron: "0 9 * * *", Timezone: "Europe/Paris", Prompt: "daily", NextRun: t0.Add(time.Hour), CreatedAt: t0}
	id2, err := s.AddSchedule(ctx, daily, 2)
	require.NoError(t, err)
	_, err = s.AddSchedule(ctx, daily, 2)
	assert.ErrorIs(t, err, state.ErrTooMany, "the chat's limit")
	_, err = s.AddSchedule(ctx, state.Schedule{Key: state.ChatKey{Chat: 5}, Prompt: "other topic", NextRun: t0}, 2)
	require.NoError(t, err, "the limit is per topic")

	file := state.Schedule{Key: key, ConfigKey: "k1", Cron: "@daily", Prompt: "from the file", NextRun: t0.Add(2 * time.Hour)}
	require.NoError(t, s.SyncConfigSchedules(ctx, []state.Schedule{file}))
	list, err := s.ChatSchedules(ctx, key)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []string{"from the file", "later", "daily"}, []string{list[0].Prompt, list[1].Prompt, list[2].Prompt})
	assert.Equal(t, state.ScheduleFromConfig, list[0].Source)
	assert.Equal(t, id1, list[1].ID)

	deleted, err := s.DeleteSchedule(ctx, key, list[0].ID)
	require.NoError(t, err)
	assert.False(t, deleted, "a file schedule is not deleted from a chat")
	deleted, err = s.DeleteSchedule(ctx, state.ChatKey{Chat: 6}, id1)
	require.NoError(t, err)
	assert.False(t, deleted, "another chat cannot delete it")

	next, ok, err := s.NextScheduleRun(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, next.Equal(t0))

	due, err := s.DueSchedules(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, due, 3)
	moved, err := s.AdvanceSchedule(ctx, id1, due[1].NextRun, time.Time{}, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, moved)
	moved, err = s.AdvanceSchedule(ctx, id1, due[1].NextRun, time.Time{}, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, moved, "advanced once")
	moved, err = s.AdvanceSchedule(ctx, id2, daily.NextRun, daily.NextRun.Add(24*time.Hour), daily.NextRun)
	require.NoError(t, err)
	assert.True(t, moved)

	require.NoError(t, s.Close())
	s = openStore(t, dir)
	// The file changed: k1 kept (its run unchanged), k2 added, the rest gone.
	file2 := state.Schedule{Key: key, ConfigKey: "k2", Cron: "@hourly", Prompt: "new", NextRun: t0.Add(3 * time.Hour)}
	moved1 := file
	moved1.NextRun = t0.Add(99 * time.Hour) // ignored: k1 keeps its stored next run
	require.NoError(t, s.SyncConfigSchedules(ctx, []state.Schedule{moved1, file2}))
	list, err = s.ChatSchedules(ctx, key)
	require.NoError(t, err)
	require.Len(t, list, 3, "the one-off ran and is gone from the list")
	assert.Equal(t, "from the file", list[0].Prompt)
	assert.True(t, list[0].NextRun.Equal(file.NextRun))
	assert.Equal(t, "new", list[1].Prompt)
	assert.Equal(t, "daily", list[2].Prompt)
	assert.True(t, list[2].LastRun.Equal(daily.NextRun))
	require.NoError(t, s.SyncConfigSchedules(ctx, nil))
	list, err = s.ChatSchedules(ctx, key)
	require.NoError(t, err)
	assert.Len(t, list, 1)

	deleted, err = s.DeleteSchedule(ctx, key, id2)
	require.NoError(t, err)
	assert.True(t, deleted)
	_, err = s.GetSchedule(ctx, id2)
	assert.ErrorIs(t, err, state.ErrNotFound)
}

func TestMigrateChatMovesSchedulesAndRetries(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	from, to := state.ChatID(-10), state.ChatID(-100010)
	_, err := s.AddSchedule(ctx, state.Schedule{Key: state.ChatKey{Chat: from}, Prompt: "p", NextRun: t0}, 5)
	require.NoError(t, err)
	require.NoError(t, s.PutRetry(ctx, state.Retry{Token: "t", Key: state.ChatKey{Chat: from}, Input: []byte("{}"),
		ResetsAt: t0, State: state.RetryScheduled}))
	require.NoError(t, s.MigrateChat(ctx, from, to))
	list, err := s.ChatSchedules(ctx, state.ChatKey{Chat: to})
	require.NoError(t, err)
	assert.Len(t, list, 1)
	r, err := s.GetRetry(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, to, r.Key.Chat)
}

func TestPruneDoneRetriesAndSchedules(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	old, recent := t0.Add(-100*24*time.Hour), t0.Add(-time.Hour)
	for tok, r := range map[string]struct {
		at time.Time
		st state.RetryState
	}{"old-sent": {old, state.RetrySent}, "old-waiting": {old, state.RetryScheduled}, "recent-dropped": {recent, state.RetryDropped}} {
		require.NoError(t, s.PutRetry(ctx, state.Retry{Token: tok, Key: state.ChatKey{Chat: 1}, Input: []byte("{}"),
			ResetsAt: r.at, State: r.st, CreatedAt: r.at}))
	}
	ranID, err := s.AddSchedule(ctx, state.Schedule{Key: state.ChatKey{Chat: 1}, Prompt: "ran", NextRun: old, CreatedAt: old}, 5)
	require.NoError(t, err)
	_, err = s.AdvanceSchedule(ctx, ranID, old, time.Time{}, old)
	require.NoError(t, err)
	require.NoError(t, s.FinishScheduleRun(ctx, ranID, old))
	pendingID, err := s.AddSchedule(ctx, state.Schedule{Key: state.ChatKey{Chat: 1}, Prompt: "fired, never reached the CLI", NextRun: old, CreatedAt: old}, 5)
	require.NoError(t, err)
	_, err = s.AdvanceSchedule(ctx, pendingID, old, time.Time{}, old)
	require.NoError(t, err)
	_, err = s.AddSchedule(ctx, state.Schedule{Key: state.ChatKey{Chat: 1}, Cron: "@daily", Prompt: "cron", NextRun: t0, CreatedAt: old}, 5)
	require.NoError(t, err)

	p, err := s.Prune(ctx, t0.Add(-90*24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, state.Pruned{Retries: 1, Schedules: 1}, p)
	_, err = s.GetRetry(ctx, "old-sent")
	assert.ErrorIs(t, err, state.ErrNotFound)
	_, err = s.GetRetry(ctx, "old-waiting")
	assert.NoError(t, err, "a retry still waiting is kept whatever its age")
	_, err = s.GetSchedule(ctx, ranID)
	assert.ErrorIs(t, err, state.ErrNotFound)
	_, err = s.GetSchedule(ctx, pendingID)
	assert.NoError(t, err, "a run still pending is kept whatever its age")
	list, err := s.ChatSchedules(ctx, state.ChatKey{Chat: 1})
	require.NoError(t, err)
	assert.Len(t, list, 1, "a schedule that runs again is kept")
}

// A run is pending from its claim until FinishScheduleRun; a skipped run
// (no ran time) never is; a later run claimed meanwhile stays pending
// when the earlier one finishes. A retry claimed to fire is listed until
// it moves on.
func TestPendingRunsAndFiringRetries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	key := state.ChatKey{Chat: 7}
	id, err := s.AddSchedule(ctx, state.Schedule{Key: key, Cron: "@every 1m", Prompt: "p", NextRun: t0}, 5)
	require.NoError(t, err)
	_, err = s.AdvanceSchedule(ctx, id, t0, t0.Add(time.Minute), time.Time{}) // skipped while down
	require.NoError(t, err)
	runs, err := s.PendingScheduleRuns(ctx)
	require.NoError(t, err)
	assert.Empty(t, runs, "a skipped run is not pending")

	first, second := t0.Add(time.Minute), t0.Add(2*time.Minute)
	_, err = s.AdvanceSchedule(ctx, id, first, second, first)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s = openStore(t, dir) // pending across a restart
	runs, err = s.PendingScheduleRuns(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.True(t, runs[0].PendingRun.Equal(first))
	_, err = s.AdvanceSchedule(ctx, id, second, second.Add(time.Minute), second)
	require.NoError(t, err)
	require.NoError(t, s.FinishScheduleRun(ctx, id, first))
	runs, err = s.PendingScheduleRuns(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1, "the later run still waits")
	assert.True(t, runs[0].PendingRun.Equal(second))
	require.NoError(t, s.FinishScheduleRun(ctx, id, second))
	runs, err = s.PendingScheduleRuns(ctx)
	require.NoError(t, err)
	assert.Empty(t, runs)

	require.NoError(t, s.PutRetry(ctx, state.Retry{Token: "r", Key: key, Input: []byte("{}"), ResetsAt: t0, State: state.RetryScheduled}))
	ok, err := s.DecideRetry(ctx, "r", state.RetryFiring, 0, state.RetryScheduled)
	require.NoError(t, err)
	require.True(t, ok)
	firing, err := s.FiringRetries(ctx)
	require.NoError(t, err)
	require.Len(t, firing, 1)
	assert.Equal(t, "r", firing[0].Token)
	ok, err = s.DecideRetry(ctx, "r", state.RetrySent, 0, state.RetryFiring)
	require.NoError(t, err)
	require.True(t, ok)
	firing, err = s.FiringRetries(ctx)
	require.NoError(t, err)
	assert.Empty(t, firing)
}

package state_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// TestMigrationFilesTurnsUnderProjects: a database from before migration 8
// has turns without a project; the upgrade files each under its session's
// project, and a turn whose session is unknown under "default".
func TestMigrationFilesTurnsUnderProjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
	require.NoError(t, err)
	for _, m := range state.MigrationsUpTo(7) {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 7`)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO chats (chat_id, thread_id) VALUES (42, 0)`,
		`INSERT INTO sessions (session_id, chat_id, project, started_at, last_active) VALUES ('s-api', 42, 'api', 1, 1)`,
		`INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok) VALUES (42, 0, 's-api', 10, 1, 1.25, 0, 1)`,
		`INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok) VALUES (42, 0, 's-old', 11, 1, 0.5, 0, 1)`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	since := time.Unix(0, 0)
	api, err := s.ProjectCostSince(ctx, "api", since)
	require.NoError(t, err)
	assert.InDelta(t, 1.25, api, 1e-9)
	def, err := s.ProjectCostSince(ctx, "default", since)
	require.NoError(t, err)
	assert.InDelta(t, 0.5, def, 1e-9)
}

// TestProjectCostSince counts only the project's turns since the time.
func TestProjectCostSince(t *testing.T) {
	ctx := context.Background()
	s, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	key := state.ChatKey{Chat: 42}
	for _, r := range []state.TurnRecord{
		{Key: key, StartedAt: start, CostUSD: 1, Project: "api"},
		{Key: key, StartedAt: start.Add(time.Hour), CostUSD: 2, Project: "api"},
		{Key: key, StartedAt: start.Add(time.Hour), CostUSD: 4, Project: "web"},
		{Key: key, StartedAt: start.Add(time.Hour), CostUSD: 8}, // no project: "default"
	} {
		require.NoError(t, s.RecordTurn(ctx, r))
	}
	for _, tc := range []struct {
		project string
		since   time.Time
		want    float64
	}{
		{"api", start, 3},
		{"api", start.Add(time.Minute), 2},
		{"web", start, 4},
		{"default", start, 8},
		{"none", start, 0},
	} {
		got, err := s.ProjectCostSince(ctx, tc.project, tc.since)
		require.NoError(t, err)
		assert.InDelta(t, tc.want, got, 1e-9, tc.project)
	}
	total, err := s.CostSince(ctx, start)
	require.NoError(t, err)
	assert.InDelta(t, 15, total, 1e-9, "the global budget still counts every project")
}

// TestMigrationKeepsOldRetriesPlaceless: a retry kept before migration 9
// has no project; it reads back with "" (wherever the chat works).
func TestMigrationKeepsOldRetriesPlaceless(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
	require.NoError(t, err)
	for _, m := range state.MigrationsUpTo(8) {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 8`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO limit_retries (token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state,
		decided_by, created_at) VALUES ('old', 42, 0, 1, 0, '{}', 'hi', '', 5, 'scheduled', 0, 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	r, err := s.GetRetry(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, "", r.Project)
	assert.Equal(t, "", r.Branch)
	assert.Equal(t, state.RetryScheduled, r.State)
}

// Migration 10 copies limit_retries into a table that allows "firing"
// and adds schedules.pending_run: rows made before keep everything.
func TestMigrationAllowsFiringRetriesAndKeepsRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
	require.NoError(t, err)
	for _, m := range state.MigrationsUpTo(9) {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 9`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO limit_retries (token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state,
		decided_by, created_at, project, branch) VALUES ('v9', 42, 3, 1, 7, '{"text":"hi"}', 'hi', 'five_hour', 5, 'scheduled', 0, 1, 'beta', 'fix')`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO schedules (chat_id, thread_id, source, config_key, cron, timezone, prompt, fresh_session, next_run, created_at)
		VALUES (42, 3, 'chat', '', '', '', 'later', 0, 9, 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	r, err := s.GetRetry(ctx, "v9")
	require.NoError(t, err)
	assert.Equal(t, state.Retry{Token: "v9", Key: state.ChatKey{Chat: 42, Thread: 3}, ReplyTo: 1, MessageID: 7, Input: []byte(`{"text":"hi"}`),
		Label: "hi", Window: "five_hour", Project: "beta", Branch: "fix", ResetsAt: r.ResetsAt, State: state.RetryScheduled, CreatedAt: r.CreatedAt}, r)
	ok, err := s.DecideRetry(ctx, "v9", state.RetryFiring, 0, state.RetryScheduled)
	require.NoError(t, err)
	assert.True(t, ok, "firing is allowed now")
	runs, err := s.PendingScheduleRuns(ctx)
	require.NoError(t, err)
	assert.Empty(t, runs)
	list, err := s.ChatSchedules(ctx, state.ChatKey{Chat: 42, Thread: 3})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "later", list[0].Prompt)
}

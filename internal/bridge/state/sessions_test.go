package state_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestProjectSessionsPerChatProjectBranch(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 7}
	topic := state.ChatKey{Chat: -100, Thread: 3}

	got, err := s.ProjectSession(ctx, key, "api", "")
	require.NoError(t, err)
	assert.Empty(t, got, "never ran there")

	require.NoError(t, s.NoteSession(ctx, key, "api", "", "sess-api"))
	require.NoError(t, s.NoteSession(ctx, key, "web", "", "sess-web"))
	require.NoError(t, s.NoteSession(ctx, key, "api", "feature", "sess-feat"))
	require.NoError(t, s.NoteSession(ctx, topic, "api", "", "sess-topic"))
	for _, tc := range []struct {
		key             state.ChatKey
		project, branch string
		want            string
	}{
		{key, "api", "", "sess-api"},
		{key, "web", "", "sess-web"},
		{key, "api", "feature", "sess-feat"},
		{topic, "api", "", "sess-topic"},
		{topic, "web", "", ""},
	} {
		got, err := s.ProjectSession(ctx, tc.key, tc.project, tc.branch)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s %s@%s", tc.key, tc.project, tc.branch)
	}

	// /new forgets the pointer; the history keeps the session.
	require.NoError(t, s.NoteSession(ctx, key, "api", "", ""))
	got, err = s.ProjectSession(ctx, key, "api", "")
	require.NoError(t, err)
	assert.Empty(t, got)
	se, err := s.GetSession(ctx, "sess-api")
	require.NoError(t, err)
	assert.Equal(t, "api", se.Project)
	assert.Equal(t, key, se.Key)
}

func TestSessionHistory(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 7}

	require.NoError(t, s.NoteSession(ctx, key, "api", "", "one"))
	require.NoError(t, s.NoteFirstPrompt(ctx, "one", "fix the login bug"))
	require.NoError(t, s.NoteFirstPrompt(ctx, "one", "a later message"), "only the first is kept")
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, SessionID: "one", StartedAt: t0, Duration: time.Second, CostUSD: 0.25}))
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, SessionID: "one", StartedAt: t0.Add(time.Minute), Duration: time.Second, CostUSD: 0.5}))
	require.NoError(t, s.NoteSession(ctx, key, "web", "feature", "two"))
	require.NoError(t, s.NoteFirstPrompt(ctx, "two", strings.Repeat("é", 2000)))
	// The same id noted again (a resume) keeps where it was filed.
	require.NoError(t, s.NoteSession(ctx, key, "web", "feature", "one"))
	require.NoError(t, s.NoteSession(ctx, state.ChatKey{Chat: 8}, "api", "", "other chat"))

	list, err := s.RecentSessions(ctx, key, 10)
	require.NoError(t, err)
	require.Len(t, list, 2)
	byID := map[string]state.Session{}
	for _, se := range list {
		byID[se.ID] = se
	}
	one := byID["one"]
	assert.Equal(t, "api", one.Project)
	assert.Equal(t, "fix the login bug", one.FirstPrompt)
	assert.Equal(t, 2, one.Turns)
	assert.InDelta(t, 0.75, one.CostUSD, 1e-9)
	two := byID["two"]
	assert.Equal(t, "feature", two.Branch)
	assert.Len(t, []rune(two.FirstPrompt), 500, "the first prompt is cut")

	require.NoError(t, s.TouchSession(ctx, "two"))
	list, err = s.RecentSessions(ctx, key, 1)
	require.NoError(t, err)
	require.Len(t, list, 1)

	_, err = s.GetSession(ctx, "nope")
	assert.ErrorIs(t, err, state.ErrNotFound)
}

func TestMigrateChatMovesProjectSessions(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	from, to := state.ChatID(-5), state.ChatID(-1005)
	require.NoError(t, s.NoteSession(ctx, state.ChatKey{Chat: from}, "api", "", "sess"))
	require.NoError(t, s.MigrateChat(ctx, from, to))
	got, err := s.ProjectSession(ctx, state.ChatKey{Chat: to}, "api", "")
	require.NoError(t, err)
	assert.Equal(t, "sess", got)
	list, err := s.RecentSessions(ctx, state.ChatKey{Chat: to}, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	got, err = s.ProjectSession(ctx, state.ChatKey{Chat: from}, "api", "")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestMigrationFilesSessionsUnderDefault: a database from before projects
// has chats with sessions and turns; after the upgrade each chat's session
// is its "default" project's, its history holds what the turns recorded,
// and the chat has chosen no project (it follows the config).
func TestMigrationFilesSessionsUnderDefault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
	require.NoError(t, err)
	for _, m := range state.MigrationsUpTo(6) {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	for _, q := range []string{
		`PRAGMA user_version = 6`,
		`INSERT INTO chats (chat_id, thread_id, session_id, last_active, cost_usd, turns) VALUES (42, 0, 'sess-1', 5000, 1.5, 3)`,
		`INSERT INTO chats (chat_id, thread_id, session_id, last_active) VALUES (43, 0, '', 5000)`,
		`INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok) VALUES (42, 0, 'old', 1000, 10, 1, 0, 1)`,
		`INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok) VALUES (42, 0, 'sess-1', 2000, 10, 0.25, 0, 1)`,
		`INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok) VALUES (42, 0, 'sess-1', 3000, 10, 0.25, 0, 1)`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	c, err := s.GetChat(ctx, state.ChatKey{Chat: 42})
	require.NoError(t, err)
	assert.Equal(t, "sess-1", c.SessionID)
	assert.Empty(t, c.Project, "no choice made: the chat follows the config")
	got, err := s.ProjectSession(ctx, state.ChatKey{Chat: 42}, "default", "")
	require.NoError(t, err)
	assert.Equal(t, "sess-1", got, "the existing session is the default project's")
	got, err = s.ProjectSession(ctx, state.ChatKey{Chat: 43}, "default", "")
	require.NoError(t, err)
	assert.Empty(t, got)

	list, err := s.RecentSessions(ctx, state.ChatKey{Chat: 42}, 0)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "sess-1", list[0].ID)
	assert.Equal(t, 2, list[0].Turns)
	assert.InDelta(t, 0.5, list[0].CostUSD, 1e-9)
	assert.Equal(t, "default", list[0].Project)
	assert.Equal(t, "old", list[1].ID)
	assert.Equal(t, 1, list[1].Turns)
}

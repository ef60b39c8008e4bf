package state_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// TestMigrationDropsCopiedSettings: a database from before migration 5 has
// the config's mode, model and workdir copied into its chats; after the
// upgrade the chats keep their session and totals but no settings.
func TestMigrationDropsCopiedSettings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
	require.NoError(t, err)
	for _, m := range state.MigrationsUpTo(4) {
		_, err := db.Exec(m)
		require.NoError(t, err)
	}
	_, err = db.Exec(`PRAGMA user_version = 4`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO chats (chat_id, thread_id, session_id, model, permission_mode, workdir, last_active, cost_usd, turns)
		VALUES (42, 0, 'sess-1', 'opus', 'bypassPermissions', '/old/project', 1, 1.5, 3)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	v, err := s.SchemaVersion(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, v, 5, fmt.Sprint("migrated to ", v))
	c, err := s.GetChat(ctx, state.ChatKey{Chat: 42})
	require.NoError(t, err)
	assert.Equal(t, "sess-1", c.SessionID, "the session survives")
	assert.Equal(t, 1.5, c.CostUSD)
	assert.Equal(t, 3, c.Turns)
	assert.Empty(t, c.PermissionMode, "the copied mode is dropped")
	assert.Empty(t, c.Model)
	assert.Empty(t, c.Workdir)
}

package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Chat is what the daemon remembers about one conversation between restarts.
type Chat struct {
	Key       ChatKey
	SessionID string // CLI session to --resume; "" starts fresh
	// Model, PermissionMode and Workdir are what the chat's users chose
	// (/model, /mode; Workdir is not settable yet). "" means the config's
	// value, read whenever the chat's session starts.
	Model          string
	PermissionMode string
	Workdir        string
	// Effort is the effort level the chat's users chose with /effort
	// (a runner.Effort); "" means the config's.
	Effort string
	// Project and Branch are the project (a config name) and git worktree
	// the chat's users chose with /project, /topic, /branch or a Resume;
	// "" follows the config's default project and its main checkout.
	Project    string
	Branch     string
	LastActive time.Time
	// CostUSD and Turns accumulate across turns. RecordTurn owns them:
	// PutChat writes them only when it creates the row.
	CostUSD float64
	Turns   int
}

const chatColumns = `chat_id, thread_id, session_id, model, permission_mode, workdir, project, branch, last_active, cost_usd, turns, effort`

func scanChat(row interface{ Scan(...any) error }) (Chat, error) {
	var (
		c      Chat
		active int64
	)
	err := row.Scan(&c.Key.Chat, &c.Key.Thread, &c.SessionID, &c.Model, &c.PermissionMode,
		&c.Workdir, &c.Project, &c.Branch, &active, &c.CostUSD, &c.Turns, &c.Effort)
	c.LastActive = fromNanos(active)
	return c, err
}

// GetChat returns the chat stored under key, or ErrNotFound.
func (s *Store) GetChat(ctx context.Context, key ChatKey) (Chat, error) {
	row := s.db.QueryRowContext(ctx,
		`SELECT `+chatColumns+` FROM chats WHERE chat_id = ? AND thread_id = ?`, key.Chat, key.Thread)
	c, err := scanChat(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Chat{}, fmt.Errorf("get chat %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return Chat{}, fmt.Errorf("get chat %s: %w", key, err)
	}
	return c, nil
}

// PutChat creates or updates the chat's identity and settings. On update it
// leaves CostUSD and Turns alone: an actor holding a copy read before a turn
// was recorded must not erase that turn's cost.
func (s *Store) PutChat(ctx context.Context, c Chat) error {
	_, err := s.exec(ctx, `
INSERT INTO chats (`+chatColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (chat_id, thread_id) DO UPDATE SET
	session_id      = excluded.session_id,
	model           = excluded.model,
	permission_mode = excluded.permission_mode,
	workdir         = excluded.workdir,
	project         = excluded.project,
	branch          = excluded.branch,
	last_active     = excluded.last_active,
	effort          = excluded.effort`,
		c.Key.Chat, c.Key.Thread, c.SessionID, c.Model, c.PermissionMode, c.Workdir, c.Project, c.Branch,
		toNanos(c.LastActive), c.CostUSD, c.Turns, c.Effort)
	if err != nil {
		return fmt.Errorf("save chat %s: %w", c.Key, err)
	}
	return nil
}

// ListChats returns every chat ordered by key.
func (s *Store) ListChats(ctx context.Context) ([]Chat, error) {
	chats, err := s.queryChats(ctx,
		`SELECT `+chatColumns+` FROM chats ORDER BY chat_id, thread_id`)
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	return chats, nil
}

// RecentChats returns chats active at or after since, most recent first, at
// most limit of them (limit <= 0: all). The daemon pre-spawns their sessions
// at startup so the first message after a restart does not wait for the CLI.
func (s *Store) RecentChats(ctx context.Context, since time.Time, limit int) ([]Chat, error) {
	chats, err := s.queryChats(ctx, `
SELECT `+chatColumns+` FROM chats
WHERE last_active >= ?
ORDER BY last_active DESC, chat_id, thread_id
LIMIT ?`, toNanos(since), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list chats active since %s: %w", since.Format(time.RFC3339), err)
	}
	return chats, nil
}

// ForgetSession clears the chat's session id so its next message starts a
// fresh CLI session (/new). Settings and cumulative stats stay. Forgetting a
// chat that has no row is not an error: there is nothing to resume either way.
func (s *Store) ForgetSession(ctx context.Context, key ChatKey) error {
	_, err := s.exec(ctx, `UPDATE chats SET session_id = '' WHERE chat_id = ? AND thread_id = ?`,
		key.Chat, key.Thread)
	if err != nil {
		return fmt.Errorf("forget session of chat %s: %w", key, err)
	}
	return nil
}

func (s *Store) queryChats(ctx context.Context, query string, args ...any) ([]Chat, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var chats []Chat
	for rows.Next() {
		c, err := scanChat(rows)
		if err != nil {
			return nil, err
		}
		chats = append(chats, c)
	}
	return chats, rows.Err()
}

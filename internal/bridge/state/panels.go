package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Panel is a chat's (or forum topic's) control panel (/panel): the message
// that shows its settings with buttons, and the token those buttons carry.
// A chat has at most one; a newer one replaces it.
type Panel struct {
	Key       ChatKey
	MessageID MessageID
	// Token is in every button's callback data; a press whose token is not
	// the chat's panel's is refused.
	Token string
	// Pinned: untether pinned the message, and unpins it when a newer
	// panel replaces it.
	Pinned    bool
	CreatedAt time.Time
}

// PutPanel stores p as its chat's panel, replacing the one it had.
func (s *Store) PutPanel(ctx context.Context, p Panel) error {
	if p.MessageID <= 0 || p.Token == "" {
		return fmt.Errorf("put panel of chat %s: message %d, token %q: %w", p.Key, p.MessageID, p.Token, ErrInvalid)
	}
	_, err := s.exec(ctx, `
INSERT INTO panels (chat_id, thread_id, message_id, token, pinned, created_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (chat_id, thread_id) DO UPDATE SET
	message_id = excluded.message_id,
	token      = excluded.token,
	pinned     = excluded.pinned,
	created_at = excluded.created_at`,
		p.Key.Chat, p.Key.Thread, p.MessageID, p.Token, p.Pinned, toNanos(s.orNow(p.CreatedAt)))
	if err != nil {
		return fmt.Errorf("put panel of chat %s: %w", p.Key, err)
	}
	return nil
}

// GetPanel returns the chat's panel, or ErrNotFound.
func (s *Store) GetPanel(ctx context.Context, key ChatKey) (Panel, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+panelColumns+` FROM panels WHERE chat_id = ? AND thread_id = ?`, key.Chat, key.Thread)
	p, err := scanPanel(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Panel{}, fmt.Errorf("get panel of chat %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return Panel{}, fmt.Errorf("get panel of chat %s: %w", key, err)
	}
	return p, nil
}

// DeletePanel forgets the chat's panel; forgetting none is not an error.
func (s *Store) DeletePanel(ctx context.Context, key ChatKey) error {
	if _, err := s.exec(ctx, `DELETE FROM panels WHERE chat_id = ? AND thread_id = ?`, key.Chat, key.Thread); err != nil {
		return fmt.Errorf("delete panel of chat %s: %w", key, err)
	}
	return nil
}

// ListPanels returns every chat's panel, ordered by chat.
func (s *Store) ListPanels(ctx context.Context) ([]Panel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+panelColumns+` FROM panels ORDER BY chat_id, thread_id`)
	if err != nil {
		return nil, fmt.Errorf("list panels: %w", err)
	}
	defer rows.Close()
	var out []Panel
	for rows.Next() {
		p, err := scanPanel(rows)
		if err != nil {
			return nil, fmt.Errorf("list panels: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list panels: %w", err)
	}
	return out, nil
}

const panelColumns = `chat_id, thread_id, message_id, token, pinned, created_at`

func scanPanel(row interface{ Scan(...any) error }) (Panel, error) {
	var (
		p       Panel
		created int64
	)
	err := row.Scan(&p.Key.Chat, &p.Key.Thread, &p.MessageID, &p.Token, &p.Pinned, &created)
	p.CreatedAt = fromNanos(created)
	return p, err
}

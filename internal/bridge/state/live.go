package state

import (
	"context"
	"fmt"
	"time"
)

// LiveKind says what a live message is, and so how a restart reconciles it.
type LiveKind string

const (
	// LiveProgress is an in-flight progress message; after a restart it is
	// edited to say the turn was interrupted.
	LiveProgress LiveKind = "progress"
	// LiveApproval is a pending approval prompt; after a restart it is
	// edited to say the request expired.
	LiveApproval LiveKind = "approval"
)

func (k LiveKind) valid() bool { return k == LiveProgress || k == LiveApproval }

// LiveMessage is a Telegram message the daemon is still editing. It is
// recorded once sent and removed once final, so whatever is left at startup
// is an orphan of the previous run.
type LiveMessage struct {
	Key       ChatKey
	MessageID MessageID
	Kind      LiveKind
	Ref       string // approval token or turn id
	CreatedAt time.Time
}

// AddLive records m; a zero CreatedAt means now. Re-adding the same message
// replaces the record, so a retried send cannot fail on its own earlier write.
func (s *Store) AddLive(ctx context.Context, m LiveMessage) error {
	if !m.Kind.valid() {
		return fmt.Errorf("add live message %s/%d: kind %q: %w", m.Key, m.MessageID, m.Kind, ErrInvalid)
	}
	_, err := s.exec(ctx, `
INSERT INTO live_messages (chat_id, thread_id, message_id, kind, ref, created_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (chat_id, message_id) DO UPDATE SET
	thread_id  = excluded.thread_id,
	kind       = excluded.kind,
	ref        = excluded.ref,
	created_at = excluded.created_at`,
		m.Key.Chat, m.Key.Thread, m.MessageID, string(m.Kind), m.Ref, toNanos(s.orNow(m.CreatedAt)))
	if err != nil {
		return fmt.Errorf("add live message %s/%d: %w", m.Key, m.MessageID, err)
	}
	return nil
}

// RemoveLive forgets a live message. Message ids are unique per chat, so
// only key.Chat is matched. Removing an absent message is not an error:
// normal completion and startup reconciliation may both try.
func (s *Store) RemoveLive(ctx context.Context, key ChatKey, id MessageID) error {
	_, err := s.exec(ctx, `DELETE FROM live_messages WHERE chat_id = ? AND message_id = ?`, key.Chat, id)
	if err != nil {
		return fmt.Errorf("remove live message %s/%d: %w", key, id, err)
	}
	return nil
}

// ListLive returns every live message, oldest first.
func (s *Store) ListLive(ctx context.Context) ([]LiveMessage, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT chat_id, thread_id, message_id, kind, ref, created_at FROM live_messages
ORDER BY created_at, chat_id, message_id`)
	if err != nil {
		return nil, fmt.Errorf("list live messages: %w", err)
	}
	defer rows.Close()
	var out []LiveMessage
	for rows.Next() {
		var (
			m       LiveMessage
			kind    string
			created int64
		)
		if err := rows.Scan(&m.Key.Chat, &m.Key.Thread, &m.MessageID, &kind, &m.Ref, &created); err != nil {
			return nil, fmt.Errorf("list live messages: %w", err)
		}
		m.Kind = LiveKind(kind)
		m.CreatedAt = fromNanos(created)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list live messages: %w", err)
	}
	return out, nil
}

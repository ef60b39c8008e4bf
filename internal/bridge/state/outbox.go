package state

import (
	"context"
	"fmt"
	"time"
)

// OutboxItem is a Telegram send journaled before it is attempted, so a send
// the daemon accepted is delivered even if the daemon dies first.
type OutboxItem struct {
	ID        int64 // assigned by EnqueueOutbox; never reused
	Key       ChatKey
	Kind      string // the sender's operation name, e.g. "send" or "edit"
	Payload   []byte // the sender's encoding of the request
	CreatedAt time.Time
	Attempts  int
}

// EnqueueOutbox journals it and returns its id. A zero CreatedAt means now.
func (s *Store) EnqueueOutbox(ctx context.Context, it OutboxItem) (int64, error) {
	if it.Kind == "" {
		return 0, fmt.Errorf("enqueue outbox item for chat %s: empty kind: %w", it.Key, ErrInvalid)
	}
	payload := it.Payload
	if payload == nil {
		payload = []byte{} // the column is NOT NULL; nil and empty mean the same
	}
	res, err := s.exec(ctx, `
INSERT INTO outbox (chat_id, thread_id, kind, payload, created_at, attempts) VALUES (?, ?, ?, ?, ?, ?)`,
		it.Key.Chat, it.Key.Thread, it.Kind, payload, toNanos(s.orNow(it.CreatedAt)), it.Attempts)
	if err != nil {
		return 0, fmt.Errorf("enqueue outbox %s for chat %s: %w", it.Kind, it.Key, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("enqueue outbox %s for chat %s: read id: %w", it.Kind, it.Key, err)
	}
	return id, nil
}

// AckOutbox removes a delivered (or permanently failed) item. ErrNotFound
// means it was already acked, which points at a double delivery.
func (s *Store) AckOutbox(ctx context.Context, id int64) error {
	return s.outboxUpdate(ctx, "ack", id, `DELETE FROM outbox WHERE id = ?`)
}

// BumpOutboxAttempt counts a failed delivery attempt, so a poison item can
// be given up on after a few tries, across restarts too.
func (s *Store) BumpOutboxAttempt(ctx context.Context, id int64) error {
	return s.outboxUpdate(ctx, "count attempt of", id, `UPDATE outbox SET attempts = attempts + 1 WHERE id = ?`)
}

func (s *Store) outboxUpdate(ctx context.Context, what string, id int64, query string) error {
	res, err := s.exec(ctx, query, id)
	if err != nil {
		return fmt.Errorf("%s outbox item %d: %w", what, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s outbox item %d: %w", what, id, err)
	} else if n == 0 {
		return fmt.Errorf("%s outbox item %d: %w", what, id, ErrNotFound)
	}
	return nil
}

// PendingOutbox returns every unacked item in enqueue (id) order, which is
// the order they must be replayed in.
func (s *Store) PendingOutbox(ctx context.Context) ([]OutboxItem, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT id, chat_id, thread_id, kind, payload, created_at, attempts FROM outbox ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list pending outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxItem
	for rows.Next() {
		var (
			it      OutboxItem
			created int64
		)
		if err := rows.Scan(&it.ID, &it.Key.Chat, &it.Key.Thread, &it.Kind, &it.Payload, &created, &it.Attempts); err != nil {
			return nil, fmt.Errorf("list pending outbox: %w", err)
		}
		if len(it.Payload) == 0 {
			it.Payload = nil
		}
		it.CreatedAt = fromNanos(created)
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list pending outbox: %w", err)
	}
	return out, nil
}

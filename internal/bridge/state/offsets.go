package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LastUpdateID returns the highest Telegram update id recorded as handled,
// or 0 if none. Poll with offset LastUpdateID()+1.
func (s *Store) LastUpdateID(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT last_update_id FROM update_offset WHERE id = 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read last update id: %w", err)
	}
	return id, nil
}

// SetLastUpdateID records id as handled. It never moves the offset
// backwards: handlers finish out of order, and a slow one saving an older
// id must not make a restart replay updates that were already handled.
// The rule lives in SQL so it holds even against another writer.
func (s *Store) SetLastUpdateID(ctx context.Context, id int64) error {
	_, err := s.exec(ctx, `
INSERT INTO update_offset (id, last_update_id) VALUES (1, ?)
ON CONFLICT (id) DO UPDATE SET last_update_id = excluded.last_update_id
WHERE excluded.last_update_id > update_offset.last_update_id`, id)
	if err != nil {
		return fmt.Errorf("save last update id %d: %w", id, err)
	}
	return nil
}

// MarkUpdateHandled records that update id was fully handled, even though
// earlier updates may still be in flight.
func (s *Store) MarkUpdateHandled(ctx context.Context, id int64) error {
	if _, err := s.exec(ctx, `INSERT OR IGNORE INTO handled_updates (update_id) VALUES (?)`, id); err != nil {
		return fmt.Errorf("mark update %d handled: %w", id, err)
	}
	return nil
}

// HandledUpdatesAbove returns the ids recorded by MarkUpdateHandled that are
// greater than offset (the updates a restart must not handle again), and
// forgets the ones at or below it, which the offset already covers. On a
// disk that refuses writes (ErrStorage) they are kept for another time:
// a daemon must be able to start on a full disk.
func (s *Store) HandledUpdatesAbove(ctx context.Context, offset int64) ([]int64, error) {
	if _, err := s.exec(ctx, `DELETE FROM handled_updates WHERE update_id <= ?`, offset); err != nil && !errors.Is(err, ErrStorage) {
		return nil, fmt.Errorf("prune handled updates: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT update_id FROM handled_updates WHERE update_id > ? ORDER BY update_id`, offset)
	if err != nil {
		return nil, fmt.Errorf("read handled updates: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read handled updates: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// DeferredUpdate is a Telegram message update kept until it is handled.
type DeferredUpdate struct {
	UpdateID int64
	Payload  []byte // the update as the Bot API sent it
}

// DeferUpdate keeps a message update until ForgetDeferredUpdate: it is
// written when the update is routed, so an update that a crash or a drain
// catches before its chat handled it is handled by the next start.
// go-telegram/bot confirms updates to Telegram before they are handled, so
// Telegram itself would not send it again.
func (s *Store) DeferUpdate(ctx context.Context, u DeferredUpdate) error {
	if _, err := s.exec(ctx, `INSERT OR IGNORE INTO deferred_updates (update_id, payload, created_at) VALUES (?, ?, ?)`,
		u.UpdateID, u.Payload, s.orNow(time.Time{}).UnixNano()); err != nil {
		return fmt.Errorf("defer update %d: %w", u.UpdateID, err)
	}
	return nil
}

// ForgetDeferredUpdate drops a kept update once it was handled.
func (s *Store) ForgetDeferredUpdate(ctx context.Context, id int64) error {
	if _, err := s.exec(ctx, `DELETE FROM deferred_updates WHERE update_id = ?`, id); err != nil {
		return fmt.Errorf("forget deferred update %d: %w", id, err)
	}
	return nil
}

// DeferredUpdates returns the kept updates in id order.
func (s *Store) DeferredUpdates(ctx context.Context) ([]DeferredUpdate, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT update_id, payload FROM deferred_updates ORDER BY update_id`)
	if err != nil {
		return nil, fmt.Errorf("read deferred updates: %w", err)
	}
	defer rows.Close()
	var out []DeferredUpdate
	for rows.Next() {
		var u DeferredUpdate
		if err := rows.Scan(&u.UpdateID, &u.Payload); err != nil {
			return nil, fmt.Errorf("read deferred updates: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

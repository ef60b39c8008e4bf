package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// MaxStoredInput caps the tool input an approval keeps for its audit
// trail: a Write of a large file would otherwise store the whole file, once
// per request, for the whole retention period.
const MaxStoredInput = 16 << 10

// capInput keeps a tool input within MaxStoredInput, still as valid JSON (a
// restart re-renders the approval from it): a larger one becomes an object
// saying so, with the input's first bytes as text.
func capInput(in []byte) []byte {
	if len(in) <= MaxStoredInput {
		return in
	}
	head := []rune(string(in[:MaxStoredInput-256]))
	out, err := json.Marshal(map[string]any{"untether_truncated": true, "bytes": len(in), "head": string(head[:len(head)-1])})
	if err != nil {
		return []byte(`{"untether_truncated":true}`)
	}
	return out
}

// Pruned counts what Prune deleted.
type Pruned struct {
	Approvals, Turns, HandledUpdates int64
	// Retries sent or dropped, and one-off schedules that ran.
	Retries, Schedules int64
	// LostWakeups offered for ▶️ Re-arm, pressed or not (pending ones stay).
	LostWakeups int64
}

// Prune deletes what the retention period no longer asks to keep: decided
// approvals and turns that started before before (pending approvals stay
// whatever their age), handled-update marks the persisted offset already
// covers, retries after a limit that were sent or dropped and one-off
// schedules that ran, and lost wake-ups offered again, made before before. Chats, their sessions and their
// running totals stay.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	var p Pruned
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []struct {
			n    *int64
			sql  string
			args []any
		}{
			{&p.Approvals, `DELETE FROM approvals WHERE decision <> '' AND created_at < ?`, []any{toNanos(before)}},
			{&p.Turns, `DELETE FROM turns WHERE started_at < ?`, []any{toNanos(before)}},
			{&p.HandledUpdates, `DELETE FROM handled_updates WHERE update_id <= (SELECT COALESCE(MAX(last_update_id), 0) FROM update_offset)`, nil},
			{&p.Retries, `DELETE FROM limit_retries WHERE state IN ('sent', 'dropped') AND created_at < ?`, []any{toNanos(before)}},
			{&p.Schedules, `DELETE FROM schedules WHERE next_run = 0 AND pending_run = 0 AND created_at < ?`, []any{toNanos(before)}},
			{&p.LostWakeups, `DELETE FROM lost_wakeups WHERE state <> 'pending' AND created_at < ?`, []any{toNanos(before)}},
		} {
			res, err := tx.ExecContext(ctx, q.sql, q.args...)
			if err != nil {
				return err
			}
			if *q.n, err = res.RowsAffected(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Pruned{}, fmt.Errorf("prune state older than %s: %w", before.Format(time.RFC3339), err)
	}
	return p, nil
}

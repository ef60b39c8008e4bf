package state

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// LimitWindow is the last known state of one subscription window, from the
// CLI's rate_limit_event. The account's windows are shared by every chat.
type LimitWindow struct {
	Type        string // five_hour, seven_day, ...
	Status      string // allowed | allowed_warning | rejected; "" when not reported
	Utilization float64
	ResetsAt    time.Time
	UpdatedAt   time.Time
}

// PutLimitWindows records the windows' latest state, replacing what was
// known of each.
func (s *Store) PutLimitWindows(ctx context.Context, ws []LimitWindow) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		for _, w := range ws {
			if _, err := tx.ExecContext(ctx, `
INSERT INTO limit_windows (window, status, utilization, resets_at, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (window) DO UPDATE SET status = excluded.status, utilization = excluded.utilization,
	resets_at = excluded.resets_at, updated_at = excluded.updated_at`,
				w.Type, w.Status, w.Utilization, toNanos(w.ResetsAt), toNanos(s.orNow(w.UpdatedAt))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record subscription windows: %w", err)
	}
	return nil
}

// LimitWindows returns every window known, by type.
func (s *Store) LimitWindows(ctx context.Context) ([]LimitWindow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT window, status, utilization, resets_at, updated_at FROM limit_windows ORDER BY window`)
	if err != nil {
		return nil, fmt.Errorf("list subscription windows: %w", err)
	}
	defer rows.Close()
	var out []LimitWindow
	for rows.Next() {
		var (
			w               LimitWindow
			resets, updated int64
		)
		if err := rows.Scan(&w.Type, &w.Status, &w.Utilization, &resets, &updated); err != nil {
			return nil, fmt.Errorf("list subscription windows: %w", err)
		}
		w.ResetsAt, w.UpdatedAt = fromNanos(resets), fromNanos(updated)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list subscription windows: %w", err)
	}
	return out, nil
}

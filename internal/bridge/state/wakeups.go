package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LostWakeup is a wake-up Claude had set that its CLI lost when it had to
// close (a restart, /new, a switch, a crash), kept so its ▶️ Re-arm button
// works across restarts. Rearmed is set once: the first press wins.
type LostWakeup struct {
	Token     string
	Key       ChatKey
	SessionID string // the session the wake-up belonged to
	Project   string // where that session ran
	Branch    string
	Wakeup    []byte // the wake-up, as the bridge encoded it
	Why       string // what closed the CLI, in the user's words
	Rearmed   bool
	DecidedBy UserID
	CreatedAt time.Time
}

// PutLostWakeup records a lost wake-up offered again.
func (s *Store) PutLostWakeup(ctx context.Context, w LostWakeup) error {
	if w.Token == "" || w.SessionID == "" || len(w.Wakeup) == 0 {
		return fmt.Errorf("record lost wake-up: %w: token, session and wake-up are required", ErrInvalid)
	}
	if _, err := s.exec(ctx, `
INSERT INTO lost_wakeups (token, chat_id, thread_id, session_id, project, branch, wakeup, why, state, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'offered', ?)`,
		w.Token, w.Key.Chat, w.Key.Thread, w.SessionID, w.Project, w.Branch, w.Wakeup, w.Why, toNanos(s.orNow(w.CreatedAt))); err != nil {
		return fmt.Errorf("record lost wake-up %s: %w", w.Token, err)
	}
	return nil
}

// GetLostWakeup returns the lost wake-up of a token.
func (s *Store) GetLostWakeup(ctx context.Context, token string) (LostWakeup, error) {
	var (
		w       LostWakeup
		st      string
		created int64
	)
	err := s.db.QueryRowContext(ctx, `
SELECT token, chat_id, thread_id, session_id, project, branch, wakeup, why, state, decided_by, created_at
FROM lost_wakeups WHERE token = ?`, token).Scan(&w.Token, &w.Key.Chat, &w.Key.Thread, &w.SessionID, &w.Project, &w.Branch,
		&w.Wakeup, &w.Why, &st, &w.DecidedBy, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return LostWakeup{}, fmt.Errorf("read lost wake-up %s: %w", token, ErrNotFound)
	case err != nil:
		return LostWakeup{}, fmt.Errorf("read lost wake-up %s: %w", token, err)
	}
	w.Rearmed, w.CreatedAt = st == "rearmed", fromNanos(created)
	return w, nil
}

// RearmLostWakeup marks a lost wake-up re-armed by by, and reports whether
// this call did: false means an earlier press did.
func (s *Store) RearmLostWakeup(ctx context.Context, token string, by UserID) (bool, error) {
	moved, err := s.execOne(ctx, `UPDATE lost_wakeups SET state = 'rearmed', decided_by = ? WHERE token = ? AND state = 'offered'`, by, token)
	if err != nil {
		return false, fmt.Errorf("re-arm lost wake-up %s: %w", token, err)
	}
	return moved, nil
}

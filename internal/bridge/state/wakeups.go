package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// WakeupState is where a wake-up Claude set stands.
type WakeupState string

// Wake-up states. A wake-up is pending while its CLI waits for it; when a
// closed CLI lost it, it is offered again (▶️ Re-arm), and rearmed once
// the first press asked Claude to set it again. A pending row at start is
// one a killed daemon's CLI took with it. A pending wake-up that fired or
// was cancelled is deleted.
const (
	WakeupPending WakeupState = "pending"
	WakeupOffered WakeupState = "offered"
	WakeupRearmed WakeupState = "rearmed"
)

// LostWakeup is a wake-up Claude had set, kept so that its loss can be
// told and its ▶️ Re-arm button works across restarts.
type LostWakeup struct {
	Token     string
	Key       ChatKey
	SessionID string // the session the wake-up belonged to
	Project   string // where that session ran
	Branch    string
	Wakeup    []byte // the wake-up, as the bridge encoded it
	Why       string // what closed the CLI, in the user's words
	State     WakeupState
	DecidedBy UserID
	CreatedAt time.Time
}

// PutLostWakeup records a wake-up, pending or offered.
func (s *Store) PutLostWakeup(ctx context.Context, w LostWakeup) error {
	if w.Token == "" || w.SessionID == "" || len(w.Wakeup) == 0 || (w.State != WakeupPending && w.State != WakeupOffered) {
		return fmt.Errorf("record wake-up: %w: token, session, wake-up and a pending or offered state are required", ErrInvalid)
	}
	if _, err := s.exec(ctx, `
INSERT INTO lost_wakeups (token, chat_id, thread_id, session_id, project, branch, wakeup, why, state, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.Token, w.Key.Chat, w.Key.Thread, w.SessionID, w.Project, w.Branch, w.Wakeup, w.Why, string(w.State),
		toNanos(s.orNow(w.CreatedAt))); err != nil {
		return fmt.Errorf("record wake-up %s: %w", w.Token, err)
	}
	return nil
}

const wakeupColumns = `token, chat_id, thread_id, session_id, project, branch, wakeup, why, state, decided_by, created_at`

func scanWakeup(row interface{ Scan(...any) error }) (LostWakeup, error) {
	var (
		w       LostWakeup
		st      string
		created int64
	)
	if err := row.Scan(&w.Token, &w.Key.Chat, &w.Key.Thread, &w.SessionID, &w.Project, &w.Branch,
		&w.Wakeup, &w.Why, &st, &w.DecidedBy, &created); err != nil {
		return LostWakeup{}, err
	}
	w.State, w.CreatedAt = WakeupState(st), fromNanos(created)
	return w, nil
}

// GetLostWakeup returns the wake-up of a token.
func (s *Store) GetLostWakeup(ctx context.Context, token string) (LostWakeup, error) {
	w, err := scanWakeup(s.db.QueryRowContext(ctx, `SELECT `+wakeupColumns+` FROM lost_wakeups WHERE token = ?`, token))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return LostWakeup{}, fmt.Errorf("read wake-up %s: %w", token, ErrNotFound)
	case err != nil:
		return LostWakeup{}, fmt.Errorf("read wake-up %s: %w", token, err)
	}
	return w, nil
}

// PendingWakeups returns the wake-ups still pending, oldest first: at
// start, the ones a killed daemon's CLIs took with them.
func (s *Store) PendingWakeups(ctx context.Context) ([]LostWakeup, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+wakeupColumns+` FROM lost_wakeups WHERE state = 'pending' ORDER BY created_at, token`)
	if err != nil {
		return nil, fmt.Errorf("read pending wake-ups: %w", err)
	}
	defer rows.Close()
	var out []LostWakeup
	for rows.Next() {
		w, err := scanWakeup(rows)
		if err != nil {
			return nil, fmt.Errorf("read pending wake-ups: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pending wake-ups: %w", err)
	}
	return out, nil
}

// OfferLostWakeup marks a pending wake-up lost, for why, and offered for
// ▶️ Re-arm; it reports whether it was pending.
func (s *Store) OfferLostWakeup(ctx context.Context, token, why string) (bool, error) {
	moved, err := s.execOne(ctx, `UPDATE lost_wakeups SET state = 'offered', why = ? WHERE token = ? AND state = 'pending'`, why, token)
	if err != nil {
		return false, fmt.Errorf("offer lost wake-up %s: %w", token, err)
	}
	return moved, nil
}

// ForgetPendingWakeup deletes a pending wake-up that fired or was
// cancelled; an offered one stays.
func (s *Store) ForgetPendingWakeup(ctx context.Context, token string) error {
	if _, err := s.exec(ctx, `DELETE FROM lost_wakeups WHERE token = ? AND state = 'pending'`, token); err != nil {
		return fmt.Errorf("forget pending wake-up %s: %w", token, err)
	}
	return nil
}

// RearmLostWakeup marks an offered wake-up re-armed by by, and reports
// whether this call did: false means an earlier press did.
func (s *Store) RearmLostWakeup(ctx context.Context, token string, by UserID) (bool, error) {
	moved, err := s.execOne(ctx, `UPDATE lost_wakeups SET state = 'rearmed', decided_by = ? WHERE token = ? AND state = 'offered'`, by, token)
	if err != nil {
		return false, fmt.Errorf("re-arm lost wake-up %s: %w", token, err)
	}
	return moved, nil
}

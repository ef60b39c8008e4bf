package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RetryState is where a prompt a subscription limit rejected stands.
type RetryState string

// Retry states. A retry moves asked → scheduled → firing → sent, or to
// dropped from asked, scheduled or firing; each move happens once
// (DecideRetry). Firing is claimed by the scheduler and not yet in the
// CLI's hands (the chat may be busy): a restart then fires it again
// (FiringRetries).
const (
	RetryAsked     RetryState = "asked"     // buttons offered, nobody chose yet
	RetryScheduled RetryState = "scheduled" // sent again at ResetsAt
	RetryFiring    RetryState = "firing"    // due and claimed, on its way to the CLI
	RetrySent      RetryState = "sent"      // handed back to the CLI (or refused with a message)
	RetryDropped   RetryState = "dropped"
)

// Retry is a prompt a subscription limit rejected, kept until the limit
// resets so it can be sent again, across restarts.
type Retry struct {
	Token     string // its buttons' callback token
	Key       ChatKey
	ReplyTo   MessageID // the user's message, which the answer replies to
	MessageID MessageID // the notice with the buttons, once sent
	Input     []byte    // the prompt, as the bridge encoded it
	Label     string    // the prompt's first words, for notices
	Window    string    // the limit's window (five_hour, ...), "" when unknown
	Project   string    // where the rejected turn ran; "" (rows from before) is wherever the chat works
	Branch    string
	ResetsAt  time.Time
	State     RetryState
	DecidedBy UserID
	// CreatedBy wrote the prompt (for a scheduled one: the schedule's
	// creator); 0 for nobody, such as a [[schedules]] entry.
	CreatedBy UserID
	CreatedAt time.Time
}

// PutRetry records a new retry.
func (s *Store) PutRetry(ctx context.Context, r Retry) error {
	if r.Token == "" || len(r.Input) == 0 || r.ResetsAt.IsZero() {
		return fmt.Errorf("record retry: %w: token, input and reset time are required", ErrInvalid)
	}
	if _, err := s.exec(ctx, `
INSERT INTO limit_retries (token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state, decided_by, created_at,
	project, branch, created_by)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Token, r.Key.Chat, r.Key.Thread, r.ReplyTo, r.MessageID, r.Input, r.Label, r.Window, toNanos(r.ResetsAt), string(r.State),
		r.DecidedBy, toNanos(s.orNow(r.CreatedAt)), r.Project, r.Branch, r.CreatedBy); err != nil {
		return fmt.Errorf("record retry %s: %w", r.Token, err)
	}
	return nil
}

const retryColumns = `token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state, decided_by, created_at,
	project, branch, created_by`

func scanRetry(row interface{ Scan(...any) error }) (Retry, error) {
	var (
		r               Retry
		resets, created int64
		st              string
	)
	if err := row.Scan(&r.Token, &r.Key.Chat, &r.Key.Thread, &r.ReplyTo, &r.MessageID, &r.Input, &r.Label, &r.Window, &resets, &st,
		&r.DecidedBy, &created, &r.Project, &r.Branch, &r.CreatedBy); err != nil {
		return Retry{}, err
	}
	r.ResetsAt, r.CreatedAt, r.State = fromNanos(resets), fromNanos(created), RetryState(st)
	return r, nil
}

// GetRetry returns the retry of a token.
func (s *Store) GetRetry(ctx context.Context, token string) (Retry, error) {
	r, err := scanRetry(s.db.QueryRowContext(ctx, `SELECT `+retryColumns+` FROM limit_retries WHERE token = ?`, token))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Retry{}, fmt.Errorf("read retry %s: %w", token, ErrNotFound)
	case err != nil:
		return Retry{}, fmt.Errorf("read retry %s: %w", token, err)
	}
	return r, nil
}

// SetRetryMessage records the notice that carries a retry's buttons.
func (s *Store) SetRetryMessage(ctx context.Context, token string, id MessageID) error {
	if _, err := s.exec(ctx, `UPDATE limit_retries SET message_id = ? WHERE token = ?`, id, token); err != nil {
		return fmt.Errorf("record retry %s message: %w", token, err)
	}
	return nil
}

// DecideRetry moves a retry from one of from to to, and reports whether it
// did: false means another press, or the scheduler, moved it first.
func (s *Store) DecideRetry(ctx context.Context, token string, to RetryState, by UserID, from ...RetryState) (bool, error) {
	if len(from) == 0 {
		return false, fmt.Errorf("decide retry %s: %w: no state to move from", token, ErrInvalid)
	}
	args := []any{string(to), by, token}
	in := ""
	for i, f := range from {
		if i > 0 {
			in += ", "
		}
		in += "?"
		args = append(args, string(f))
	}
	moved, err := s.execOne(ctx, `UPDATE limit_retries SET state = ?, decided_by = ? WHERE token = ? AND state IN (`+in+`)`, args...)
	if err != nil {
		return false, fmt.Errorf("decide retry %s: %w", token, err)
	}
	return moved, nil
}

// FiringRetries returns the retries claimed to fire that never reached
// the CLI, oldest first.
func (s *Store) FiringRetries(ctx context.Context) ([]Retry, error) {
	return s.retries(ctx, "firing retries", `state = ? ORDER BY resets_at`, string(RetryFiring))
}

// DueRetries returns the scheduled retries whose limit has reset by now.
func (s *Store) DueRetries(ctx context.Context, now time.Time) ([]Retry, error) {
	return s.retries(ctx, "due retries", `state = ? AND resets_at <= ? ORDER BY resets_at`, string(RetryScheduled), toNanos(now))
}

func (s *Store) retries(ctx context.Context, what, where string, args ...any) ([]Retry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+retryColumns+` FROM limit_retries WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []Retry
	for rows.Next() {
		r, err := scanRetry(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}

// NextRetry is when the earliest scheduled retry is due; ok is false when
// none is scheduled.
func (s *Store) NextRetry(ctx context.Context) (at time.Time, ok bool, err error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(resets_at) FROM limit_retries WHERE state = ?`,
		string(RetryScheduled)).Scan(&n); err != nil {
		return time.Time{}, false, fmt.Errorf("find the next retry: %w", err)
	}
	if !n.Valid {
		return time.Time{}, false, nil
	}
	return fromNanos(n.Int64), true, nil
}

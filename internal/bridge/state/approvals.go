package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Decision is the outcome of an approval request; DecisionPending until one
// is recorded, after which it never changes.
type Decision string

const (
	DecisionPending Decision = ""
	DecisionAllow   Decision = "allow"
	DecisionDeny    Decision = "deny"
	// DecisionAlways allows and applies the CLI's permission suggestions.
	DecisionAlways Decision = "always"
	// DecisionAnswer answers an AskUserQuestion-style request.
	DecisionAnswer  Decision = "answer"
	DecisionExpired Decision = "expired"
	// DecisionWithdrawn: the CLI cancelled the request (control_cancel_request).
	DecisionWithdrawn Decision = "withdrawn"
	// DecisionInterrupted: the turn was interrupted or the daemon restarted,
	// or the user's answer could not be written to the CLI (the note says
	// "could not reach Claude" and what was chosen).
	DecisionInterrupted Decision = "interrupted"
)

// Final reports whether d is a recordable outcome (anything but pending).
func (d Decision) Final() bool {
	switch d {
	case DecisionAllow, DecisionDeny, DecisionAlways, DecisionAnswer,
		DecisionExpired, DecisionWithdrawn, DecisionInterrupted:
		return true
	}
	return false
}

// Approval is one permission request shown to the user, and its audit trail.
type Approval struct {
	Token       string // short opaque token carried in callback_data
	Key         ChatKey
	MessageID   MessageID // the prompt message; 0 until sent
	RequestID   string    // the CLI's control request id
	SessionID   string
	Tool        string
	Summary     string
	InputJSON   []byte // raw JSON tool input
	Suggestions []byte // raw JSON permission suggestions
	CreatedAt   time.Time
	ExpiresAt   time.Time
	Decision    Decision
	DecidedBy   UserID // 0 when the daemon decided (expiry, withdrawal, restart)
	DecidedAt   time.Time
	Note        string
}

const approvalColumns = `token, chat_id, thread_id, message_id, request_id, session_id, tool, summary,
	input_json, suggestions, created_at, expires_at, decision, decided_by, decided_at, note`

func scanApproval(row interface{ Scan(...any) error }) (Approval, error) {
	var (
		a                         Approval
		decision                  string
		created, expires, decided int64
	)
	err := row.Scan(&a.Token, &a.Key.Chat, &a.Key.Thread, &a.MessageID, &a.RequestID, &a.SessionID,
		&a.Tool, &a.Summary, &a.InputJSON, &a.Suggestions, &created, &expires, &decision,
		&a.DecidedBy, &decided, &a.Note)
	a.Decision = Decision(decision)
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = fromNanos(created), fromNanos(expires), fromNanos(decided)
	return a, err
}

// PutApproval records a new pending approval; a zero CreatedAt means now.
// It fails with ErrExists if the token is taken and ErrInvalid if a is
// already decided or carries malformed JSON, which a restart could not
// re-render.
func (s *Store) PutApproval(ctx context.Context, a Approval) error {
	if json.Valid(a.InputJSON) {
		a.InputJSON = capInput(a.InputJSON)
	}
	switch {
	case a.Token == "":
		return fmt.Errorf("save approval: empty token: %w", ErrInvalid)
	case a.Decision != DecisionPending:
		return fmt.Errorf("save approval %s: decision %q on insert: %w", a.Token, a.Decision, ErrInvalid)
	case len(a.InputJSON) > 0 && !json.Valid(a.InputJSON):
		return fmt.Errorf("save approval %s: input is not JSON: %w", a.Token, ErrInvalid)
	case len(a.Suggestions) > 0 && !json.Valid(a.Suggestions):
		return fmt.Errorf("save approval %s: suggestions are not JSON: %w", a.Token, ErrInvalid)
	}
	res, err := s.exec(ctx, `
INSERT INTO approvals (token, chat_id, thread_id, message_id, request_id, session_id, tool, summary,
	input_json, suggestions, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (token) DO NOTHING`,
		a.Token, a.Key.Chat, a.Key.Thread, a.MessageID, a.RequestID, a.SessionID, a.Tool, a.Summary,
		blob(a.InputJSON), blob(a.Suggestions), toNanos(s.orNow(a.CreatedAt)), toNanos(a.ExpiresAt))
	if err != nil {
		return fmt.Errorf("save approval %s: %w", a.Token, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("save approval %s: %w", a.Token, err)
	} else if n == 0 {
		return fmt.Errorf("save approval %s: %w", a.Token, ErrExists)
	}
	return nil
}

// GetApproval returns the approval with token, or ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, token string) (Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx,
		`SELECT `+approvalColumns+` FROM approvals WHERE token = ?`, token))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("get approval %s: %w", token, ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("get approval %s: %w", token, err)
	}
	return a, nil
}

// SetApprovalMessage records the prompt's message id once it is sent. The
// approval is stored before sending so a button press can never arrive for
// a token the store does not know.
func (s *Store) SetApprovalMessage(ctx context.Context, token string, id MessageID) error {
	res, err := s.exec(ctx, `UPDATE approvals SET message_id = ? WHERE token = ?`, id, token)
	if err != nil {
		return fmt.Errorf("set message of approval %s: %w", token, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set message of approval %s: %w", token, err)
	} else if n == 0 {
		return fmt.Errorf("set message of approval %s: %w", token, ErrNotFound)
	}
	return nil
}

// DecideApproval records the decision if, and only if, the approval is still
// pending. When two users press buttons at once exactly one call succeeds;
// the others get ErrAlreadyDecided and must not answer the CLI. The
// compare-and-set is a single UPDATE guarded by "still pending", so it holds
// across processes too. A zero at means now; by is 0 for daemon decisions.
func (s *Store) DecideApproval(ctx context.Context, token string, d Decision, by UserID, at time.Time, note string) error {
	if !d.Final() {
		return fmt.Errorf("decide approval %s: decision %q: %w", token, d, ErrInvalid)
	}
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return fmt.Errorf("decide approval %s: %w", token, err)
	}
	defer unlock()
	res, err := s.db.ExecContext(ctx, `
UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ?, note = ?
WHERE token = ? AND decision = ''`,
		string(d), by, toNanos(s.orNow(at)), note, token)
	if err != nil {
		err = classifyWrite(err)
		return fmt.Errorf("decide approval %s: %w", token, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("decide approval %s: %w", token, err)
	}
	if n == 1 {
		return nil
	}
	// Lost the race or no such token. Decisions never revert to pending,
	// so a decided row read now was already decided when the UPDATE ran.
	var prev string
	err = s.db.QueryRowContext(ctx, `SELECT decision FROM approvals WHERE token = ?`, token).Scan(&prev)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && prev == ""):
		return fmt.Errorf("decide approval %s: %w", token, ErrNotFound)
	case err != nil:
		return fmt.Errorf("decide approval %s: %w", token, err)
	}
	return fmt.Errorf("decide approval %s: already %q: %w", token, prev, ErrAlreadyDecided)
}

// PendingApprovals returns every undecided approval, oldest first: at
// startup these are orphans to expire; while running, candidates for expiry.
func (s *Store) PendingApprovals(ctx context.Context) ([]Approval, error) {
	out, err := s.queryApprovals(ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE decision = '' ORDER BY created_at, token`)
	if err != nil {
		return nil, fmt.Errorf("list pending approvals: %w", err)
	}
	return out, nil
}

// ApprovalLog returns the chat's approvals, pending and decided, newest
// first, at most limit of them (limit <= 0: all).
func (s *Store) ApprovalLog(ctx context.Context, key ChatKey, limit int) ([]Approval, error) {
	out, err := s.queryApprovals(ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE chat_id = ? AND thread_id = ?
ORDER BY created_at DESC, rowid DESC
LIMIT ?`, key.Chat, key.Thread, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("read approval log of chat %s: %w", key, err)
	}
	return out, nil
}

func (s *Store) queryApprovals(ctx context.Context, query string, args ...any) ([]Approval, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// blob stores empty byte slices as NULL so they read back as nil.
func blob(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// A chat works in one project (and optionally a branch, a git worktree of
// it) at a time, and keeps a session per (project, branch): switching back
// resumes where it left off. Every session it ran is kept as a Session, for
// /sessions.

// Session is one CLI session a chat ran.
type Session struct {
	ID          string
	Key         ChatKey
	Project     string
	Branch      string
	FirstPrompt string // the first message of the session, as the user wrote it
	StartedAt   time.Time
	LastActive  time.Time
	// Turns and CostUSD accumulate through RecordTurn.
	Turns   int
	CostUSD float64
}

// firstPromptMax bounds what is kept of a first prompt: /sessions shows a
// line of it.
const firstPromptMax = 500

// ProjectSession returns the session the chat resumes in project and
// branch, "" when it has none (never ran there, or /new).
func (s *Store) ProjectSession(ctx context.Context, key ChatKey, project, branch string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `
SELECT session_id FROM project_sessions WHERE chat_id = ? AND thread_id = ? AND project = ? AND branch = ?`,
		key.Chat, key.Thread, project, branch).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("get session of chat %s in project %s: %w", key, project, err)
	}
	return id, nil
}

// NoteSession makes id the session the chat resumes in project and branch
// ("" forgets it, as /new does) and, the first time it sees id, files it
// in the chat's history.
func (s *Store) NoteSession(ctx context.Context, key ChatKey, project, branch, id string) error {
	now := toNanos(s.now())
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `
INSERT INTO project_sessions (chat_id, thread_id, project, branch, session_id) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (chat_id, thread_id, project, branch) DO UPDATE SET session_id = excluded.session_id`,
			key.Chat, key.Thread, project, branch, id); err != nil {
			return err
		}
		if id == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO sessions (session_id, chat_id, thread_id, project, branch, started_at, last_active)
VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING`,
			id, key.Chat, key.Thread, project, branch, now, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("note session %s of chat %s in project %s: %w", id, key, project, err)
	}
	return nil
}

// NoteFirstPrompt keeps text as the session's first prompt unless it has
// one already.
func (s *Store) NoteFirstPrompt(ctx context.Context, id, text string) error {
	if r := []rune(text); len(r) > firstPromptMax {
		text = string(r[:firstPromptMax])
	}
	_, err := s.exec(ctx, `UPDATE sessions SET first_prompt = ? WHERE session_id = ? AND first_prompt = ''`, text, id)
	if err != nil {
		return fmt.Errorf("note first prompt of session %s: %w", id, err)
	}
	return nil
}

const sessionColumns = `session_id, chat_id, thread_id, project, branch, first_prompt, started_at, last_active, turns, cost_usd`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var (
		se              Session
		started, active int64
	)
	err := row.Scan(&se.ID, &se.Key.Chat, &se.Key.Thread, &se.Project, &se.Branch, &se.FirstPrompt,
		&started, &active, &se.Turns, &se.CostUSD)
	se.StartedAt, se.LastActive = fromNanos(started), fromNanos(active)
	return se, err
}

// GetSession returns the session id from the history, or ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	se, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE session_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return se, nil
}

// RecentSessions returns the chat's sessions, most recently active first,
// at most limit of them (limit <= 0: all).
func (s *Store) RecentSessions(ctx context.Context, key ChatKey, limit int) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT `+sessionColumns+` FROM sessions WHERE chat_id = ? AND thread_id = ?
ORDER BY last_active DESC, started_at DESC LIMIT ?`, key.Chat, key.Thread, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list sessions of chat %s: %w", key, err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		se, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions of chat %s: %w", key, err)
		}
		out = append(out, se)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions of chat %s: %w", key, err)
	}
	return out, nil
}

// TouchSession marks the session active now, so a resumed old session
// comes first in /sessions.
func (s *Store) TouchSession(ctx context.Context, id string) error {
	_, err := s.exec(ctx, `UPDATE sessions SET last_active = max(last_active, ?) WHERE session_id = ?`, toNanos(s.now()), id)
	if err != nil {
		return fmt.Errorf("touch session %s: %w", id, err)
	}
	return nil
}

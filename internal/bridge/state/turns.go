package state

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// defaultProject is claude.workdir's project (config.DefaultProjectName),
// where turns recorded without one ran.
const defaultProject = "default"

// TurnRecord is one finished CLI turn, kept for /status and stats.
type TurnRecord struct {
	Key       ChatKey
	SessionID string
	StartedAt time.Time
	Duration  time.Duration
	// CostUSD is this turn's cost, not the CLI's running session total: the
	// chat accumulates it, and a session total would be counted repeatedly.
	CostUSD        float64
	ContextPct     float64 // context window used at the end of the turn, 0-100
	OK             bool
	TerminalReason string
	// Tokens the turn used, as the result's usage reports them.
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
	// Project is the project the turn ran in, for its budget; "" files it
	// under "default".
	Project string
}

// RecordTurn stores rec and, in the same transaction, adds its cost to the
// chat's cumulative cost and to its session's (see NoteSession), counts the
// turn and moves the chat's LastActive to the turn's end if that is later. A chat without a row gets one, so stats
// are never dropped for want of a PutChat. A zero StartedAt means the turn
// ended now.
func (s *Store) RecordTurn(ctx context.Context, rec TurnRecord) error {
	switch {
	case rec.CostUSD < 0 || math.IsNaN(rec.CostUSD) || math.IsInf(rec.CostUSD, 0):
		return fmt.Errorf("record turn of chat %s: cost %v: %w", rec.Key, rec.CostUSD, ErrInvalid)
	case rec.Duration < 0:
		return fmt.Errorf("record turn of chat %s: duration %v: %w", rec.Key, rec.Duration, ErrInvalid)
	case math.IsNaN(rec.ContextPct) || math.IsInf(rec.ContextPct, 0):
		return fmt.Errorf("record turn of chat %s: context %v%%: %w", rec.Key, rec.ContextPct, ErrInvalid)
	}
	if rec.StartedAt.IsZero() {
		rec.StartedAt = s.now().Add(-rec.Duration)
	}
	if rec.Project == "" {
		rec.Project = defaultProject
	}
	ended := rec.StartedAt.Add(rec.Duration)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `
INSERT INTO chats (chat_id, thread_id, session_id, last_active, cost_usd, turns)
VALUES (?, ?, ?, ?, ?, 1)
ON CONFLICT (chat_id, thread_id) DO UPDATE SET
	cost_usd    = chats.cost_usd + excluded.cost_usd,
	turns       = chats.turns + 1,
	last_active = max(chats.last_active, excluded.last_active)`,
			rec.Key.Chat, rec.Key.Thread, rec.SessionID, toNanos(ended), rec.CostUSD); err != nil {
			return fmt.Errorf("update chat totals: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
UPDATE sessions SET turns = turns + 1, cost_usd = cost_usd + ?, last_active = max(last_active, ?)
WHERE session_id = ?`, rec.CostUSD, toNanos(ended), rec.SessionID); err != nil {
			return fmt.Errorf("update session totals: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `
INSERT INTO turns (chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok, terminal_reason,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, project)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.Key.Chat, rec.Key.Thread, rec.SessionID, toNanos(rec.StartedAt), int64(rec.Duration),
			rec.CostUSD, rec.ContextPct, rec.OK, rec.TerminalReason,
			rec.InputTokens, rec.OutputTokens, rec.CacheReadTokens, rec.CacheWriteTokens, rec.Project); err != nil {
			return fmt.Errorf("insert turn: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record turn of chat %s: %w", rec.Key, err)
	}
	return nil
}

// RecentTurns returns the chat's turns, newest first, at most limit of them
// (limit <= 0: all).
func (s *Store) RecentTurns(ctx context.Context, key ChatKey, limit int) ([]TurnRecord, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT session_id, started_at, duration_ns, cost_usd, context_pct, ok, terminal_reason,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens FROM turns
WHERE chat_id = ? AND thread_id = ?
ORDER BY started_at DESC, id DESC
LIMIT ?`, key.Chat, key.Thread, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("list turns of chat %s: %w", key, err)
	}
	defer rows.Close()
	var out []TurnRecord
	for rows.Next() {
		var (
			t        = TurnRecord{Key: key}
			started  int64
			duration int64
		)
		if err := rows.Scan(&t.SessionID, &started, &duration, &t.CostUSD, &t.ContextPct, &t.OK, &t.TerminalReason,
			&t.InputTokens, &t.OutputTokens, &t.CacheReadTokens, &t.CacheWriteTokens); err != nil {
			return nil, fmt.Errorf("list turns of chat %s: %w", key, err)
		}
		t.StartedAt = fromNanos(started)
		t.Duration = time.Duration(duration)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns of chat %s: %w", key, err)
	}
	return out, nil
}

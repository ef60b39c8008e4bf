package state

import (
	"context"
	"fmt"
	"time"
)

// TurnsSince returns every chat's turns that started at or after since,
// oldest first, for /usage.
func (s *Store) TurnsSince(ctx context.Context, since time.Time) ([]TurnRecord, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT chat_id, thread_id, session_id, started_at, duration_ns, cost_usd, context_pct, ok, terminal_reason,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens FROM turns
WHERE started_at >= ?
ORDER BY started_at, id`, toNanos(since))
	if err != nil {
		return nil, fmt.Errorf("list turns since %s: %w", since.Format(time.RFC3339), err)
	}
	defer rows.Close()
	var out []TurnRecord
	for rows.Next() {
		var (
			t                 TurnRecord
			started, duration int64
		)
		if err := rows.Scan(&t.Key.Chat, &t.Key.Thread, &t.SessionID, &started, &duration, &t.CostUSD, &t.ContextPct, &t.OK,
			&t.TerminalReason, &t.InputTokens, &t.OutputTokens, &t.CacheReadTokens, &t.CacheWriteTokens); err != nil {
			return nil, fmt.Errorf("list turns since %s: %w", since.Format(time.RFC3339), err)
		}
		t.StartedAt = fromNanos(started)
		t.Duration = time.Duration(duration)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns since %s: %w", since.Format(time.RFC3339), err)
	}
	return out, nil
}

// CostSince is what every chat's turns that started at or after since cost
// together, for budgets.
func (s *Store) CostSince(ctx context.Context, since time.Time) (float64, error) {
	var cost float64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_usd), 0) FROM turns WHERE started_at >= ?`,
		toNanos(since)).Scan(&cost); err != nil {
		return 0, fmt.Errorf("sum costs since %s: %w", since.Format(time.RFC3339), err)
	}
	return cost, nil
}

// ProjectCostSince is what the turns run in project that started at or
// after since cost together, for the project's budget.
func (s *Store) ProjectCostSince(ctx context.Context, project string, since time.Time) (float64, error) {
	var cost float64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_usd), 0) FROM turns WHERE project = ? AND started_at >= ?`,
		project, toNanos(since)).Scan(&cost); err != nil {
		return 0, fmt.Errorf("sum the costs of project %s since %s: %w", project, since.Format(time.RFC3339), err)
	}
	return cost, nil
}

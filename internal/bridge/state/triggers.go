package state

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TriggerRun is a webhook delivery a [[triggers]] entry accepted: its
// prompt, kept until it has reached the CLI of its chat (or the chat was
// told why not), so that a restart while it waits for a busy chat runs it
// after all.
type TriggerRun struct {
	ID      int64
	Trigger string // the trigger's name
	Key     ChatKey
	// Project is the trigger's project when the run was accepted, "" for
	// wherever the chat works.
	Project  string
	Prompt   string
	Delivery string // X-GitHub-Delivery, "" when the sender set none
	Event    string // X-GitHub-Event
	Created  time.Time
}

// AddTriggerRun keeps an accepted run and returns its id.
func (s *Store) AddTriggerRun(ctx context.Context, r TriggerRun) (int64, error) {
	if r.Trigger == "" || r.Prompt == "" {
		return 0, fmt.Errorf("add trigger run: %w: a trigger and a prompt are required", ErrInvalid)
	}
	res, err := s.exec(ctx, `
INSERT INTO trigger_runs (trigger, chat_id, thread_id, project, prompt, delivery, event, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.Trigger, r.Key.Chat, r.Key.Thread, r.Project, r.Prompt, r.Delivery, r.Event,
		toNanos(s.orNow(r.Created)))
	if err != nil {
		return 0, fmt.Errorf("add a run of trigger %s: %w", r.Trigger, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("add a run of trigger %s: %w", r.Trigger, err)
	}
	return id, nil
}

// FinishTriggerRun forgets a run: its prompt reached the CLI, or the chat
// was told why it did not run.
func (s *Store) FinishTriggerRun(ctx context.Context, id int64) error {
	if _, err := s.exec(ctx, `DELETE FROM trigger_runs WHERE id = ?`, id); err != nil {
		return fmt.Errorf("finish trigger run %d: %w", id, err)
	}
	return nil
}

// TriggerRuns lists the runs kept, oldest first: those a restart
// interrupted while they waited.
func (s *Store) TriggerRuns(ctx context.Context) ([]TriggerRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, trigger, chat_id, thread_id, project, prompt, delivery, event, created_at
FROM trigger_runs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list trigger runs: %w", err)
	}
	defer rows.Close()
	var out []TriggerRun
	for rows.Next() {
		var (
			r       TriggerRun
			created int64
		)
		if err := rows.Scan(&r.ID, &r.Trigger, &r.Key.Chat, &r.Key.Thread, &r.Project, &r.Prompt, &r.Delivery, &r.Event, &created); err != nil {
			return nil, fmt.Errorf("list trigger runs: %w", err)
		}
		r.Created = fromNanos(created)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list trigger runs: %w", err)
	}
	return out, nil
}

// ClaimWebhookKey records key as seen at now, unless it was seen less than
// window before now: then it reports false (a replay). Keys older than the
// window are forgotten on the way, so the table holds one window's worth.
func (s *Store) ClaimWebhookKey(ctx context.Context, key string, now time.Time, window time.Duration) (fresh bool, err error) {
	if key == "" || window <= 0 {
		return false, fmt.Errorf("claim webhook key: %w: a key and a window are required", ErrInvalid)
	}
	cutoff := toNanos(now.Add(-window))
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_seen WHERE seen_at <= ?`, cutoff); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO webhook_seen (key, seen_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, toNanos(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		fresh = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim webhook key: %w", err)
	}
	return fresh, nil
}

// ReleaseWebhookKey forgets key: its delivery did not run after all, so
// the sender's retry must.
func (s *Store) ReleaseWebhookKey(ctx context.Context, key string) error {
	if _, err := s.exec(ctx, `DELETE FROM webhook_seen WHERE key = ?`, key); err != nil {
		return fmt.Errorf("release webhook key: %w", err)
	}
	return nil
}

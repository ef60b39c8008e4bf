package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrTooMany reports an insert over a limit the caller set.
var ErrTooMany = errors.New("state: limit reached")

// ScheduleSource says who made a schedule.
type ScheduleSource string

// Schedule sources.
const (
	ScheduleFromChat   ScheduleSource = "chat"   // /at or /every
	ScheduleFromConfig ScheduleSource = "config" // a [[schedules]] entry
)

// Schedule is a prompt sent to a chat at a time (Cron empty: once) or on a
// cron schedule.
type Schedule struct {
	ID     int64
	Key    ChatKey
	Source ScheduleSource
	// ConfigKey identifies a [[schedules]] entry across restarts.
	ConfigKey    string
	Cron         string
	Timezone     string // the zone Cron is read in; "" for the host's
	Prompt       string
	FreshSession bool
	NextRun      time.Time // zero: will not run again
	LastRun      time.Time
	// PendingRun is the due time of a run that fired and has not reached
	// the CLI yet (zero: none); see AdvanceSchedule and FinishScheduleRun.
	PendingRun time.Time
	CreatedBy  UserID
	CreatedAt  time.Time
}

const scheduleColumns = `id, chat_id, thread_id, source, config_key, cron, timezone, prompt, fresh_session, next_run, last_run, created_by, created_at,
	pending_run`

func scanSchedule(row interface{ Scan(...any) error }) (Schedule, error) {
	var (
		sc                    Schedule
		src                   string
		next, last, createdAt int64
		pending               int64
	)
	if err := row.Scan(&sc.ID, &sc.Key.Chat, &sc.Key.Thread, &src, &sc.ConfigKey, &sc.Cron, &sc.Timezone, &sc.Prompt,
		&sc.FreshSession, &next, &last, &sc.CreatedBy, &createdAt, &pending); err != nil {
		return Schedule{}, err
	}
	sc.Source = ScheduleSource(src)
	sc.NextRun, sc.LastRun, sc.CreatedAt = fromNanos(next), fromNanos(last), fromNanos(createdAt)
	sc.PendingRun = fromNanos(pending)
	return sc, nil
}

func (s *Store) schedules(ctx context.Context, what, where string, args ...any) ([]Schedule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}

// AddSchedule stores a schedule a chat made and returns its id. It fails
// with ErrTooMany when the chat already has max schedules that will run.
func (s *Store) AddSchedule(ctx context.Context, sc Schedule, max int) (int64, error) {
	if sc.Prompt == "" || sc.NextRun.IsZero() {
		return 0, fmt.Errorf("add schedule: %w: a prompt and a next run are required", ErrInvalid)
	}
	var id int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schedules WHERE chat_id = ? AND thread_id = ? AND source = ? AND next_run > 0`,
			sc.Key.Chat, sc.Key.Thread, string(ScheduleFromChat)).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return fmt.Errorf("%w: %d schedules", ErrTooMany, n)
		}
		res, err := tx.ExecContext(ctx, `
INSERT INTO schedules (chat_id, thread_id, source, cron, timezone, prompt, fresh_session, next_run, created_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sc.Key.Chat, sc.Key.Thread, string(ScheduleFromChat), sc.Cron, sc.Timezone, sc.Prompt, sc.FreshSession,
			toNanos(sc.NextRun), sc.CreatedBy, toNanos(s.orNow(sc.CreatedAt)))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add schedule to chat %s: %w", sc.Key, err)
	}
	return id, nil
}

// ChatSchedules returns the schedules of a chat that will run again, the
// file's first, then by next run.
func (s *Store) ChatSchedules(ctx context.Context, key ChatKey) ([]Schedule, error) {
	return s.schedules(ctx, "schedules of chat "+key.String(),
		`chat_id = ? AND thread_id = ? AND next_run > 0 ORDER BY source = 'chat', next_run, id`, key.Chat, key.Thread)
}

// GetSchedule returns one schedule.
func (s *Store) GetSchedule(ctx context.Context, id int64) (Schedule, error) {
	sc, err := scanSchedule(s.db.QueryRowContext(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Schedule{}, fmt.Errorf("read schedule %d: %w", id, ErrNotFound)
	case err != nil:
		return Schedule{}, fmt.Errorf("read schedule %d: %w", id, err)
	}
	return sc, nil
}

// DeleteSchedule removes a schedule the chat key made, and reports whether
// there was one. The file's schedules are the file's to remove.
func (s *Store) DeleteSchedule(ctx context.Context, key ChatKey, id int64) (bool, error) {
	deleted, err := s.execOne(ctx, `DELETE FROM schedules WHERE id = ? AND chat_id = ? AND thread_id = ? AND source = ?`,
		id, key.Chat, key.Thread, string(ScheduleFromChat))
	if err != nil {
		return false, fmt.Errorf("delete schedule %d: %w", id, err)
	}
	return deleted, nil
}

// DueSchedules returns the schedules whose next run is at or before now.
func (s *Store) DueSchedules(ctx context.Context, now time.Time) ([]Schedule, error) {
	return s.schedules(ctx, "due schedules", `next_run > 0 AND next_run <= ? ORDER BY next_run, id`, toNanos(now))
}

// NextScheduleRun is the earliest next run of any schedule; ok is false when
// none will run.
func (s *Store) NextScheduleRun(ctx context.Context) (at time.Time, ok bool, err error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(next_run) FROM schedules WHERE next_run > 0`).Scan(&n); err != nil {
		return time.Time{}, false, fmt.Errorf("find the next scheduled run: %w", err)
	}
	if !n.Valid {
		return time.Time{}, false, nil
	}
	return fromNanos(n.Int64), true, nil
}

// AdvanceSchedule moves a schedule whose next run is due from due to next
// (zero: it will not run again) and records ran as its last run if it is
// not zero. It reports false when the schedule was deleted or already
// moved: the caller then does not run it. A run (ran not zero) is pending
// from then on, in the same write, until FinishScheduleRun: a restart
// before the run reached the CLI finds it in PendingScheduleRuns.
func (s *Store) AdvanceSchedule(ctx context.Context, id int64, due, next, ran time.Time) (bool, error) {
	moved, err := s.execOne(ctx, `UPDATE schedules SET next_run = ?, last_run = CASE WHEN ? > 0 THEN ? ELSE last_run END,
	pending_run = CASE WHEN ? > 0 THEN ? ELSE pending_run END
WHERE id = ? AND next_run = ?`, toNanos(next), toNanos(ran), toNanos(ran), toNanos(ran), toNanos(due), id, toNanos(due))
	if err != nil {
		return false, fmt.Errorf("advance schedule %d: %w", id, err)
	}
	return moved, nil
}

// FinishScheduleRun records that the run due at due reached the CLI, or
// was refused with a message to the chat: it is no longer pending. A later
// run that fired meanwhile stays pending.
func (s *Store) FinishScheduleRun(ctx context.Context, id int64, due time.Time) error {
	if _, err := s.exec(ctx, `UPDATE schedules SET pending_run = 0 WHERE id = ? AND pending_run = ?`, id, toNanos(due)); err != nil {
		return fmt.Errorf("finish run of schedule %d: %w", id, err)
	}
	return nil
}

// PendingScheduleRuns lists the schedules with a run that fired but never
// reached the CLI (the daemon stopped while it waited for a busy chat).
func (s *Store) PendingScheduleRuns(ctx context.Context) ([]Schedule, error) {
	return s.schedules(ctx, "pending schedule runs", `pending_run > 0 ORDER BY pending_run`)
}

// SyncConfigSchedules makes the file's schedules those of entries: an entry
// already stored (same ConfigKey) keeps its next and last run, a new one is
// added with its NextRun, and stored ones no longer in the file are removed.
func (s *Store) SyncConfigSchedules(ctx context.Context, entries []Schedule) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		keep := map[string]bool{}
		for _, sc := range entries {
			keep[sc.ConfigKey] = true
			if _, err := tx.ExecContext(ctx, `
INSERT INTO schedules (chat_id, thread_id, source, config_key, cron, timezone, prompt, fresh_session, next_run, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (config_key) WHERE source = 'config' DO NOTHING`,
				sc.Key.Chat, sc.Key.Thread, string(ScheduleFromConfig), sc.ConfigKey, sc.Cron, sc.Timezone, sc.Prompt,
				sc.FreshSession, toNanos(sc.NextRun), toNanos(s.orNow(sc.CreatedAt))); err != nil {
				return fmt.Errorf("add %s: %w", sc.ConfigKey, err)
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT config_key FROM schedules WHERE source = ?`, string(ScheduleFromConfig))
		if err != nil {
			return err
		}
		var gone []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			if !keep[k] {
				gone = append(gone, k)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range gone {
			if _, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE source = ? AND config_key = ?`, string(ScheduleFromConfig), k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store the config file's schedules: %w", err)
	}
	return nil
}

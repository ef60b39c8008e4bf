package schedules

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/cronspec"
)

// The scheduler is one goroutine for the whole bridge. It keeps no timers
// of its own state: schedules and retries live in the state store, and it
// sleeps until the earliest is due (or something changed), claims each due
// one there (so a run happens once even across a crash), and hands it to
// its chat's actor like a message from the user.

// settingPaused is the state-store setting of /schedules pause.
const settingPaused = "scheduler-paused"

// schedulerIdle bounds a sleep, so a host clock jump (suspend, NTP) delays
// a run by at most this much.
const schedulerIdle = time.Hour

func (m *Module) runScheduler(ctx context.Context) {
	m.syncConfigSchedules(ctx)
	m.replayPendingRuns(ctx) // pending.go: runs a restart interrupted go first
	m.skipMissed(ctx)
	for {
		wait := schedulerIdle
		if next := m.fireDue(ctx); !next.IsZero() {
			wait = min(wait, max(next.Sub(m.host.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		case <-m.host.Clock().After(wait):
		}
	}
}

// fireDue hands every due schedule and retry to its chat, and returns when
// the next one is due (zero: none is).
func (m *Module) fireDue(ctx context.Context) time.Time {
	now := m.host.Now()
	retry := now.Add(time.Minute) // after a store error
	paused, err := m.schedulesPaused(ctx)
	if err != nil {
		m.log.Error().Err(err).Msg("read whether schedules are paused")
		return retry
	}
	var next time.Time
	if !paused {
		due, err := m.store.DueSchedules(ctx, now)
		if err != nil {
			m.log.Error().Err(err).Msg("list due schedules")
			return retry
		}
		for _, sc := range due {
			ok, err := m.store.AdvanceSchedule(ctx, sc.ID, sc.NextRun, nextRun(sc, now), now)
			if err != nil {
				m.log.Error().Err(err).Int64("schedule", sc.ID).Msg("advance a schedule")
				return retry
			}
			if ok {
				sc.PendingRun = sc.NextRun // pending from now on (AdvanceSchedule)
				m.deliverRun(ctx, sc)      // pending.go
			}
		}
		at, ok, err := m.store.NextScheduleRun(ctx)
		if err != nil {
			m.log.Error().Err(err).Msg("find the next schedule")
			return retry
		}
		if ok {
			next = at
		}
	}
	due, err := m.store.DueRetries(ctx, now)
	if err != nil {
		m.log.Error().Err(err).Msg("list due retries")
		return retry
	}
	for _, r := range due {
		ok, err := m.store.DecideRetry(ctx, r.Token, state.RetryFiring, 0, state.RetryScheduled)
		if err != nil {
			m.log.Error().Err(err).Msg("claim a due retry")
			return retry
		}
		if ok {
			r.State = state.RetryFiring
			m.deliverRetry(ctx, r) // pending.go
		}
	}
	at, ok, err := m.store.NextRetry(ctx)
	if err != nil {
		m.log.Error().Err(err).Msg("find the next retry")
		return retry
	}
	if ok && (next.IsZero() || at.Before(next)) {
		next = at
	}
	return next
}

// deliver posts work to a chat's actor; the callers (pending.go)
// checked that the chat may still be served. While the bridge drains, the
// work stays pending for the next start.
func (m *Module) deliver(key state.ChatKey, fn func(*chat.Chat)) {
	c := m.host.Chat(key)
	if c == nil {
		return // draining
	}
	c.Post(func() { fn(c) })
}

// runRefusal says why a scheduled run or a retry after a limit may not go
// now ("" when it may): untether may no longer talk in its chat, or the
// user it is from (a schedule's creator, a prompt's author; 0 for nobody,
// as for a [[schedules]] entry) was taken off the allow-list since. Both
// are checked at every run, against the config of the moment.
func (m *Module) runRefusal(key state.ChatKey, by state.UserID) string {
	switch {
	case !m.host.ChatServed(key):
		return "the chat is no longer allowed"
	case by != 0 && !m.host.UserAllowed(by):
		return "the user it is from is no longer allowed"
	}
	return ""
}

// nextRun is a schedule's run after now; zero for a one-off.
func nextRun(sc state.Schedule, now time.Time) time.Time {
	if sc.Cron == "" {
		return time.Time{}
	}
	spec, err := cronspec.Parse(sc.Cron)
	if err != nil {
		return time.Time{} // stored after validation; cannot happen
	}
	return spec.Next(now, config.LoadLocation(sc.Timezone))
}

// skipMissed runs at start: with [scheduler] catch_up off, runs missed while
// the daemon was down are skipped (a one-off then never runs); with it on,
// fireDue runs each missed schedule once.
func (m *Module) skipMissed(ctx context.Context) {
	if m.host.Config().Scheduler.CatchUp {
		return
	}
	now := m.host.Now()
	due, err := m.store.DueSchedules(ctx, now)
	if err != nil {
		m.log.Error().Err(err).Msg("list schedules missed while down")
		return
	}
	for _, sc := range due {
		if _, err := m.store.AdvanceSchedule(ctx, sc.ID, sc.NextRun, nextRun(sc, now), time.Time{}); err != nil {
			m.log.Error().Err(err).Msg("skip a missed schedule")
		}
		m.log.Info().Int64("schedule", sc.ID).Time("was_due", sc.NextRun).Msg("skipped a run missed while untether was down (catch_up = false)")
	}
}

// syncConfigSchedules makes the stored file schedules those of the config.
func (m *Module) syncConfigSchedules(ctx context.Context) {
	cfg := m.host.Config()
	now := m.host.Now()
	entries := make([]state.Schedule, 0, len(cfg.Schedules))
	projects := map[string]string{}
	defer func() { m.schedProjects.Store(&projects) }()
	for _, e := range cfg.Schedules {
		tz := e.Timezone
		if tz == "" {
			tz = cfg.Telegram.Timezone
		}
		sc := state.Schedule{Key: state.ChatKey{Chat: state.ChatID(e.Chat), Thread: state.ThreadID(e.Thread)},
			Cron: e.Cron, Timezone: tz, Prompt: e.Prompt, FreshSession: e.FreshSession, CreatedAt: now}
		id := fmt.Appendf(nil, "%d\x00%d\x00%s\x00%s\x00%s\x00%t", e.Chat, e.Thread, e.Cron, tz, e.Prompt, e.FreshSession)
		if e.Project != "" { // only then: entries without one keep the keys they had
			id = fmt.Appendf(id, "\x00%s", e.Project)
		}
		sum := sha256.Sum256(id)
		sc.ConfigKey = hex.EncodeToString(sum[:8])
		if e.Project != "" {
			projects[sc.ConfigKey] = e.Project
		}
		sc.NextRun = nextRun(sc, now)
		entries = append(entries, sc)
	}
	if err := m.store.SyncConfigSchedules(ctx, entries); err != nil {
		m.log.Error().Err(err).Msg("store the config file's schedules")
	}
}

func (m *Module) schedulesPaused(ctx context.Context) (bool, error) {
	v, _, err := m.store.Setting(ctx, settingPaused)
	return v == "1", err
}

package schedules

import (
	"context"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
)

// Scheduled runs and limit retries are claimed in the state store when
// they fire (so each happens once), but a chat that is busy makes them
// wait, in memory, until its turn ends, and a message waiting for a live
// CLI slot waits in memory too. So a claimed run stays pending in the
// store (schedules.pending_run, limit_retries state "firing") until its
// prompt has reached the CLI or the chat has been told why not; a restart
// meanwhile hands it to its chat again (replayPendingRuns) instead of
// losing it. A crash in the moment between the CLI taking the prompt and
// the store recording it would send it twice. A schedule keeps one pending
// run: when several runs of one schedule pile up behind a busy chat, a
// restart runs the latest of them, once.

// deliverRun hands a claimed scheduled run to its chat, or ends it when
// the chat may no longer be served or its creator no longer use the bot.
func (m *Module) deliverRun(ctx context.Context, sc state.Schedule) {
	if why := m.runRefusal(sc.Key, sc.CreatedBy); why != "" {
		m.log.Warn().Str("chat", sc.Key.String()).Int64("schedule", sc.ID).Int64("created_by", int64(sc.CreatedBy)).
			Msg("not running a scheduled prompt: " + why)
		if err := m.store.FinishScheduleRun(ctx, sc.ID, sc.PendingRun); err != nil {
			m.log.Error().Err(err).Int64("schedule", sc.ID).Msg("end a scheduled run")
		}
		return
	}
	m.deliver(sc.Key, func(c *chat.Chat) { m.queue.Add(c, sc) })
}

// deliverRetry hands a claimed retry to its chat, or drops it when the
// chat may no longer be served or the prompt's author no longer use the
// bot.
func (m *Module) deliverRetry(ctx context.Context, r state.Retry) {
	if why := m.runRefusal(r.Key, r.CreatedBy); why != "" {
		m.log.Warn().Str("chat", r.Key.String()).Int64("created_by", int64(r.CreatedBy)).
			Msg("not sending a prompt again after its limit: " + why)
		if _, err := m.store.DecideRetry(ctx, r.Token, state.RetryDropped, 0, state.RetryFiring); err != nil {
			m.log.Error().Err(err).Msg("drop a retry after a limit")
		}
		return
	}
	m.deliver(r.Key, func(c *chat.Chat) { m.fireRetry(c, r) })
}

// replayPendingRuns hands every run and retry that was claimed before the
// last stop, and never reached the CLI, to its chat again.
func (m *Module) replayPendingRuns(ctx context.Context) {
	runs, err := m.store.PendingScheduleRuns(ctx)
	if err != nil {
		m.log.Error().Err(err).Msg("list scheduled runs a restart interrupted")
	}
	for _, sc := range runs {
		m.log.Info().Str("chat", sc.Key.String()).Int64("schedule", sc.ID).Time("due", sc.PendingRun).
			Msg("running a scheduled prompt that waited when untether stopped")
		m.deliverRun(ctx, sc)
	}
	retries, err := m.store.FiringRetries(ctx)
	if err != nil {
		m.log.Error().Err(err).Msg("list retries a restart interrupted")
	}
	for _, r := range retries {
		m.log.Info().Str("chat", r.Key.String()).Msg("sending again a prompt whose retry waited when untether stopped")
		m.deliverRetry(ctx, r)
	}
}

// finishScheduleRun records that the run has reached the CLI or was
// skipped with a message: it is no longer pending.
func (m *Module) finishScheduleRun(c *chat.Chat, sc state.Schedule) {
	if sc.PendingRun.IsZero() {
		return
	}
	if err := m.store.FinishScheduleRun(c.Ctx(), sc.ID, sc.PendingRun); err != nil {
		c.Log().Error().Err(err).Int64("schedule", sc.ID).Msg("end a scheduled run")
	}
}

// handOverRetry notes that the retry's prompt is on its way to the CLI.
func (m *Module) handOverRetry(c *chat.Chat, r state.Retry) {
	if m.away.Get(c).handedOver == nil {
		m.away.Get(c).handedOver = map[string]bool{}
	}
	m.away.Get(c).handedOver[r.Token] = true
}

// finishRetry moves a firing retry to sent (its prompt reached the CLI,
// or the chat was told why not) or dropped.
func (m *Module) finishRetry(c *chat.Chat, r state.Retry, to state.RetryState) {
	delete(m.away.Get(c).handedOver, r.Token)
	delete(m.away.Get(c).notices, r.Token) // its notice shows its end already
	if _, err := m.store.DecideRetry(c.Ctx(), r.Token, to, 0, state.RetryFiring); err != nil {
		c.Log().Error().Err(err).Msg("record a retry's end")
	}
}

// retryStillFiring reports whether the retry may still go: a ✖️ Drop
// pressed while it waited for the chat ends it.
func (m *Module) retryStillFiring(c *chat.Chat, r state.Retry) bool {
	cur, err := m.store.GetRetry(c.Ctx(), r.Token)
	if err != nil {
		c.Log().Error().Err(err).Msg("read a retry before sending it again")
		return true // the claim stands; sending is what was asked
	}
	return cur.State == state.RetryFiring
}

package chat

import (
	"context"

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
func (b *Engine) deliverRun(ctx context.Context, sc state.Schedule) {
	if why := b.runRefusal(sc.Key, sc.CreatedBy); why != "" {
		b.log.Warn().Str("chat", sc.Key.String()).Int64("schedule", sc.ID).Int64("created_by", int64(sc.CreatedBy)).
			Msg("not running a scheduled prompt: " + why)
		if err := b.store.FinishScheduleRun(ctx, sc.ID, sc.PendingRun); err != nil {
			b.log.Error().Err(err).Int64("schedule", sc.ID).Msg("end a scheduled run")
		}
		return
	}
	b.deliver(sc.Key, func(c *Chat) { c.runScheduled(sc) })
}

// deliverRetry hands a claimed retry to its chat, or drops it when the
// chat may no longer be served or the prompt's author no longer use the
// bot.
func (b *Engine) deliverRetry(ctx context.Context, r state.Retry) {
	if why := b.runRefusal(r.Key, r.CreatedBy); why != "" {
		b.log.Warn().Str("chat", r.Key.String()).Int64("created_by", int64(r.CreatedBy)).
			Msg("not sending a prompt again after its limit: " + why)
		if _, err := b.store.DecideRetry(ctx, r.Token, state.RetryDropped, 0, state.RetryFiring); err != nil {
			b.log.Error().Err(err).Msg("drop a retry after a limit")
		}
		return
	}
	b.deliver(r.Key, func(c *Chat) { c.fireRetry(r) })
}

// replayPendingRuns hands every run and retry that was claimed before the
// last stop, and never reached the CLI, to its chat again.
func (b *Engine) replayPendingRuns(ctx context.Context) {
	runs, err := b.store.PendingScheduleRuns(ctx)
	if err != nil {
		b.log.Error().Err(err).Msg("list scheduled runs a restart interrupted")
	}
	for _, sc := range runs {
		b.log.Info().Str("chat", sc.Key.String()).Int64("schedule", sc.ID).Time("due", sc.PendingRun).
			Msg("running a scheduled prompt that waited when untether stopped")
		b.deliverRun(ctx, sc)
	}
	retries, err := b.store.FiringRetries(ctx)
	if err != nil {
		b.log.Error().Err(err).Msg("list retries a restart interrupted")
	}
	for _, r := range retries {
		b.log.Info().Str("chat", r.Key.String()).Msg("sending again a prompt whose retry waited when untether stopped")
		b.deliverRetry(ctx, r)
	}
}

// finishScheduleRun records that the run has reached the CLI or was
// skipped with a message: it is no longer pending.
func (c *Chat) finishScheduleRun(sc state.Schedule) {
	if sc.PendingRun.IsZero() {
		return
	}
	if err := c.b.store.FinishScheduleRun(c.ctx(), sc.ID, sc.PendingRun); err != nil {
		c.log.Error().Err(err).Int64("schedule", sc.ID).Msg("end a scheduled run")
	}
}

// handOverRetry notes that the retry's prompt is on its way to the CLI.
func (c *Chat) handOverRetry(r state.Retry) {
	if c.away.handedOver == nil {
		c.away.handedOver = map[string]bool{}
	}
	c.away.handedOver[r.Token] = true
}

// finishRetry moves a firing retry to sent (its prompt reached the CLI,
// or the chat was told why not) or dropped.
func (c *Chat) finishRetry(r state.Retry, to state.RetryState) {
	delete(c.away.handedOver, r.Token)
	if _, err := c.b.store.DecideRetry(c.ctx(), r.Token, to, 0, state.RetryFiring); err != nil {
		c.log.Error().Err(err).Msg("record a retry's end")
	}
}

// retryStillFiring reports whether the retry may still go: a ✖️ Drop
// pressed while it waited for the chat ends it.
func (c *Chat) retryStillFiring(r state.Retry) bool {
	cur, err := c.b.store.GetRetry(c.ctx(), r.Token)
	if err != nil {
		c.log.Error().Err(err).Msg("read a retry before sending it again")
		return true // the claim stands; sending is what was asked
	}
	return cur.State == state.RetryFiring
}

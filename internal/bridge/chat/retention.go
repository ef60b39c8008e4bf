package chat

import (
	"context"
	"time"
)

// Nothing grows forever: decided approvals and turn records older than
// [state] retention, and handled-update marks the offset already covers,
// are pruned at start and once a day (pruneEvery), with the retention of
// the moment (it is reloadable).

// pruneState runs one pass.
func (b *Engine) pruneState(ctx context.Context, now time.Time) {
	keep := b.Config().State.Retention.Std()
	p, err := b.store.Prune(ctx, now.Add(-keep))
	if err != nil {
		b.log.Warn().Err(err).Msg("prune old state")
		return
	}
	if p.Approvals+p.Turns+p.HandledUpdates > 0 {
		b.log.Info().Int64("approvals", p.Approvals).Int64("turns", p.Turns).Int64("handled_updates", p.HandledUpdates).
			Dur("retention", keep).Msg("pruned old state")
	}
}

// startStatePruner prunes now and then once a day.
func (b *Engine) startStatePruner(ctx context.Context) (stop func()) {
	return b.daily(ctx, func(now time.Time) { b.pruneState(ctx, now) })
}

package durable

import (
	"context"
	"strconv"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

// The webhooks' writes ([[triggers]]). Accepting a run and claiming a
// delivery need their answer now (the sender is told 202 only once the run
// is on disk), so a refusal is returned; forgetting a run that reached the
// CLI is kept and done again like the chats' writes, so a full disk cannot
// make it run twice unless the daemon stops first.

func triggerSlot(id int64) string { return "trigger:" + strconv.FormatInt(id, 10) }

func (w *Writes) AddTriggerRun(ctx context.Context, r state.TriggerRun) (id int64, err error) {
	err = w.once(ctx, kindTrigger, func(ctx context.Context) (err error) {
		id, err = w.Store.AddTriggerRun(ctx, r)
		return err
	})
	return id, err
}

func (w *Writes) FinishTriggerRun(ctx context.Context, id int64) error {
	return w.write(ctx, writeOp{kind: kindTrigger, slot: triggerSlot(id), replaces: true},
		func(ctx context.Context) error { return w.Store.FinishTriggerRun(ctx, id) })
}

func (w *Writes) ClaimWebhookKey(ctx context.Context, key string, now time.Time, window time.Duration) (fresh bool, err error) {
	err = w.once(ctx, kindTrigger, func(ctx context.Context) (err error) {
		fresh, err = w.Store.ClaimWebhookKey(ctx, key, now, window)
		return err
	})
	return fresh, err
}

func (w *Writes) ReleaseWebhookKey(ctx context.Context, key string) error {
	return w.once(ctx, kindTrigger, func(ctx context.Context) error { return w.Store.ReleaseWebhookKey(ctx, key) })
}

package chat

import (
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/service/metrics"
)

// The doors the metrics module reads at each scrape, and the outbox's
// observers it registers (Registry.OnDelivered, OnRateLimited). Each may
// be called from any goroutine: they read what the engine keeps for
// sd_notify's STATUS= and the outbox's own counters, under their locks.

// The outbox tags of a turn's messages, as outbox.Dispatch.Tag names
// them: each part of its answer, and its progress message (and the edits
// of it).
const (
	TagAnswer   = tagFinal
	TagProgress = "progress"
)

// Metrics is what the daemon counts for Prometheus (Options.Metrics); nil
// (which records nothing) when it does not.
func (h *Host) Metrics() *metrics.Metrics { return h.e.opts.Metrics }

// Stats counts the live chats, their running turns and the approvals
// waiting for a person.
func (h *Host) Stats() Stats { return h.e.Stats() }

// PoolStats is what holds the live CLI slots, and how many sessions wait
// for one.
func (h *Host) PoolStats() runner.PoolStats {
	if p := h.e.opts.Pool; p != nil {
		return p.Stats()
	}
	return runner.PoolStats{}
}

// OutboxStats is the outbox's counters and queues; zero before the bridge
// connected to Telegram.
func (h *Host) OutboxStats() outbox.Stats {
	h.e.mu.Lock()
	out := h.e.out
	h.e.mu.Unlock()
	if out == nil {
		return outbox.Stats{}
	}
	return out.Stats()
}

// LastPollSuccess is when a getUpdates call last succeeded; zero before
// the first.
func (h *Host) LastPollSuccess() time.Time {
	if f := h.e.opts.Polled; f != nil {
		return f()
	}
	return time.Time{}
}

// observeOutbox chains the modules' outbox observers after the daemon's
// own options (tests set Dispatched; nobody else sets these two).
func (b *Engine) observeOutbox(o *outbox.Options) {
	if hs, prev := b.reg.onDelivered, o.Delivered; len(hs) > 0 {
		o.Delivered = func(d outbox.Dispatch) {
			if prev != nil {
				prev(d)
			}
			for _, h := range hs {
				h(d)
			}
		}
	}
	if hs, prev := b.reg.onRateLimited, o.RateLimited; len(hs) > 0 {
		o.RateLimited = func(key outbox.ChatKey, retryAfter time.Duration) {
			if prev != nil {
				prev(key, retryAfter)
			}
			for _, h := range hs {
				h(key, retryAfter)
			}
		}
	}
}

package outbox

import "sync/atomic"

// Stats is a snapshot of the outbox counters.
type Stats struct {
	Sent        uint64 // new messages, including split continuations
	Edited      uint64
	Replaced    uint64 // edits delivered as new messages
	Deleted     uint64
	ChatActions uint64
	Coalesced   uint64 // edits superseded by a newer edit, or merged into their message's queued send
	Dropped     uint64 // sends never made: the message was deleted before it went out
	Unchanged   uint64 // edits skipped as identical or "not modified"
	RateLimited uint64 // 429 answers
	Retries     uint64 // transport/5xx failures that were retried
	PlainText   uint64 // parse-error fallbacks to plain text
	Splits      uint64 // over-long texts split as a last resort
	Failed      uint64 // operations that failed permanently
	JournalErrs uint64
	ActiveChats int // chats with a worker
	Queued      int // operations waiting, excluding in-flight ones
	// QueuedHigh and QueuedLow split Queued by priority: answers,
	// approvals and notices; progress edits.
	QueuedHigh, QueuedLow int
	// Paused counts chats paused by a 429 now (their retry_after not over).
	Paused int
}

type counters struct {
	sent, edited, replaced, deleted, chatActions atomic.Uint64
	coalesced, unchanged, rateLimited, retries   atomic.Uint64
	plainText, splits, failed, journalErrs       atomic.Uint64
	dropped                                      atomic.Uint64
}

// Stats returns the counters and current queue sizes.
func (o *Outbox) Stats() Stats {
	s := Stats{
		Sent: o.stats.sent.Load(), Edited: o.stats.edited.Load(), Replaced: o.stats.replaced.Load(),
		Deleted: o.stats.deleted.Load(), ChatActions: o.stats.chatActions.Load(),
		Coalesced: o.stats.coalesced.Load(), Unchanged: o.stats.unchanged.Load(),
		RateLimited: o.stats.rateLimited.Load(), Retries: o.stats.retries.Load(),
		PlainText: o.stats.plainText.Load(), Splits: o.stats.splits.Load(),
		Failed: o.stats.failed.Load(), JournalErrs: o.stats.journalErrs.Load(), Dropped: o.stats.dropped.Load(),
	}
	now := o.clock.Now()
	for i := range o.shards {
		sh := &o.shards[i]
		sh.mu.RLock()
		for _, c := range sh.chats {
			s.ActiveChats++
			c.mu.Lock()
			s.QueuedHigh += len(c.high)
			s.QueuedLow += len(c.low)
			if c.pausedUntil.After(now) {
				s.Paused++
			}
			c.mu.Unlock()
		}
		sh.mu.RUnlock()
	}
	s.Queued = s.QueuedHigh + s.QueuedLow
	return s
}

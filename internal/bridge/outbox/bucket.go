package outbox

import (
	"sync"
	"time"
)

// chatLimit is a chat's own pacing: a token bucket in private chats, a
// sliding window in groups. Only the chat's worker touches it, under the
// chat's lock.
type chatLimit interface {
	// wait is how long until a call may be made (0: now). Low-priority
	// work (progress edits) leaves part of the budget to answers and
	// approvals.
	wait(now time.Time, low bool) time.Duration
	add(now time.Time)               // counts a call sent at now
	undo(t time.Time)                // forgets the call counted at t: Telegram never saw it
	settled(now time.Time) time.Time // when the limit is as a fresh chat's
	// penalise notes a 429 at now: the chat bursts less for a while.
	penalise(now time.Time)
}

// bucket paces a private chat as a token bucket: burst calls at once (the
// parts of a long answer, an answer after progress edits, an approval and
// its decision), then one more per every. Telegram's FAQ asks for about one
// message a second per chat and allows short bursts; BENCHMARKS.md ("The
// flood model") gives the evidence and its sources. It is kept as the time
// at which the bucket is full again (GCRA), which needs no timer.
//
// A 429 halves the bucket (down to one call) for memory, renewed by every
// further 429: a chat whose Telegram is stricter than the model bursts
// less, and after a quiet while gets its burst back.
type bucket struct {
	burst  int // the configured size
	size   int // the current size: burst, or less after a 429
	every  time.Duration
	memory time.Duration // how long a 429 keeps the bucket small
	full   time.Time     // when the bucket holds size calls again
	until  time.Time     // when size returns to burst
}

func newBucket(burst int, every, memory time.Duration) *bucket {
	burst = max(burst, 1)
	return &bucket{burst: burst, size: burst, every: every, memory: memory}
}

// lowKeep is how many calls low-priority work leaves in a bucket of size n:
// two thirds of it, so after any amount of progress an answer of four parts
// goes out at once from a bucket of six.
func lowKeep(n int) int { return n * 2 / 3 }

func (b *bucket) refresh(now time.Time) {
	if b.size < b.burst && !now.Before(b.until) {
		b.size = b.burst
	}
}

func (b *bucket) wait(now time.Time, low bool) time.Duration {
	b.refresh(now)
	keep := 0
	if low {
		keep = lowKeep(b.size)
	}
	// The call needs one call's worth left over what it must keep: the
	// bucket may be short of full by at most size-1-keep calls.
	d := latest(b.full, now).Sub(now) - time.Duration(b.size-1-keep)*b.every
	return max(d, 0)
}

func (b *bucket) add(now time.Time) {
	b.refresh(now)
	if b.full.Before(now) {
		b.full = now
	}
	b.full = b.full.Add(b.every)
}

func (b *bucket) undo(time.Time) { b.full = b.full.Add(-b.every) }

func (b *bucket) settled(now time.Time) time.Time { return latest(now, b.full) }

func (b *bucket) penalise(now time.Time) {
	b.refresh(now)
	b.size = max(1, b.size/2)
	b.until = now.Add(b.memory)
}

// chatWindow paces a group: at most n calls in any span (Telegram's 20 a
// minute), progress edits leaving one slot to answers and approvals. A 429
// pauses the group but changes nothing here: the window already is the
// documented limit.
type chatWindow struct{ w *window }

func (c chatWindow) wait(now time.Time, low bool) time.Duration {
	keep := 0
	if low {
		keep = 1
	}
	return c.w.wait(now, keep)
}

func (c chatWindow) add(now time.Time)               { c.w.add(now) }
func (c chatWindow) undo(t time.Time)                { c.w.undo(t) }
func (c chatWindow) settled(now time.Time) time.Time { return c.w.settled(now) }
func (c chatWindow) penalise(time.Time)              {}

// learned remembers the private chats whose bucket a 429 made smaller, so
// that a chat's worker retiring (an idle chat costs nothing) does not give
// the chat its full burst back early.
type learned struct {
	mu    sync.Mutex
	chats map[int64]learnedSize
}

type learnedSize struct {
	size  int
	until time.Time
}

// note records b's size for chat, and forgets what has run out.
func (l *learned) note(chat int64, b *bucket, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, s := range l.chats {
		if !now.Before(s.until) {
			delete(l.chats, id)
		}
	}
	if l.chats == nil {
		l.chats = map[int64]learnedSize{}
	}
	l.chats[chat] = learnedSize{size: b.size, until: b.until}
}

// apply gives a new worker's bucket what its chat learned.
func (l *learned) apply(chat int64, b *bucket, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.chats[chat]; ok && now.Before(s.until) {
		b.size, b.until = s.size, s.until
	}
}

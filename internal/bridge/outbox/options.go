package outbox

import (
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// Defaults for [Options]. The pacing values follow Telegram's bot FAQ: about
// one message per second per chat with short bursts, at most 20 per minute
// per group, about 30 per second overall, with headroom; BENCHMARKS.md
// ("The flood model") gives the evidence behind each and its sources.
//
// A private chat is a token bucket (bucket.go): PrivateBurst calls at once,
// then one more every PrivateInterval, 6 and 1.05 s. Progress edits leave
// two thirds of it (4) to answers and approvals, so the parts of a long
// answer, or an answer and the approval before it, go out together however
// much progress went before. A 429 halves the chat's bucket for
// PenaltyMemory (10 minutes). A group is a sliding window: GroupBurst
// calls in any span of GroupBurst×GroupInterval, 19 in 60.8 s, of which
// progress edits leave one free; the window is never exceeded. The global limit is
// a sliding window of the same kind, GlobalBurst calls in any span of
// GlobalBurst/GlobalRate: 30 in 1 s, Telegram's "about 30 messages per
// second". It needs no margin for the time between sending a call and its
// arrival, because each call counts from its send until a full span after
// its response (window.go): Telegram cannot have seen it later than that.
// A call still without a response 5 s after its send is taken to have
// arrived by then (maxArrivalDelay).
// Once it is two thirds full, progress is spread evenly at that rate;
// answers and approvals may take every slot at once. Typing and drafts take
// no message slot (gate.spare).
const (
	DefaultPrivateInterval = 1050 * time.Millisecond
	DefaultPrivateBurst    = 6
	DefaultPenaltyMemory   = 10 * time.Minute
	DefaultGroupInterval   = 3200 * time.Millisecond
	DefaultGroupBurst      = 19
	DefaultGlobalRate      = rate.Limit(30) // per second, on average
	DefaultGlobalBurst     = 30
	DefaultTypingInterval  = 4 * time.Second // the status lasts ≤5 s
	DefaultBackoffMin      = 500 * time.Millisecond
	DefaultBackoffMax      = 30 * time.Second // progress edits
	// DefaultHighBackoffMax caps the backoff of answers and approvals, so
	// that after an outage they go out within seconds even if nothing
	// else noticed that Telegram is back.
	DefaultHighBackoffMax = 5 * time.Second
	// DefaultProbeInterval is how often Telegram is probed (getMe) while
	// calls fail as if it were down; the first answer ends every backoff.
	DefaultProbeInterval     = time.Second
	DefaultRetryAfter        = 5 * time.Second // when a 429 carries no retry_after
	DefaultRateLimitJitter   = time.Second
	DefaultCallTimeout       = 30 * time.Second // a slow call must not freeze a chat (Untether #145)
	DefaultForbiddenCooldown = 5 * time.Minute
	// DefaultOvertakeAfter is how long a progress edit may be in flight
	// before the chat's answers and approvals stop waiting for it.
	DefaultOvertakeAfter = time.Second
	// DefaultSplitLimit is the chunk size, in UTF-16 code units, for the
	// last-resort split of an over-long text. Telegram allows 4096 after
	// entity parsing; UTF-16 units are the conservative reading.
	DefaultSplitLimit = 4000
	journalTimeout    = 5 * time.Second
)

// Options configures an [Outbox]. Zero values select the defaults above.
type Options struct {
	// Logger is used when an operation's context carries no logger.
	Logger *zerolog.Logger
	// Clock drives pacing, pauses and backoff; tests inject a fake.
	Clock Clock
	// Journal, if set, records high-priority sends before their first attempt.
	Journal Journal
	// OnReplaced is called (from a worker goroutine, without locks held) when
	// an edit target was gone and the content went out as a new message, so
	// the bridge can persist the new id. It runs before the edit's Pending
	// resolves, and must not block for long.
	OnReplaced func(m *Message, oldID, newID MessageID)
	// Dispatched, if set, is called just before each send, edit or delete
	// goes to Telegram (from a worker goroutine, without locks held). It is
	// for benchmarks, which split an answer's latency into the time before
	// the outbox had it and the time the outbox held it; it must be fast.
	Dispatched func(Dispatch)
	// Delivered, if set, is called after each send, edit or delete that
	// Telegram accepted (from a worker goroutine, without locks held), with
	// the call as Dispatched described it: Sent is when that call, the
	// one that got through, was made. It must be fast.
	Delivered func(Dispatch)
	// RateLimited, if set, is called for each 429 (flood control) Telegram
	// answers a call of chat key with, with its retry_after (DefaultRetryAfter
	// when it gave none). It may run with the outbox's locks held: it must
	// be fast and must not call the outbox.
	RateLimited func(key ChatKey, retryAfter time.Duration)

	PrivateInterval time.Duration // per-chat token bucket for chat ids ≥ 0: one call more per interval
	PrivateBurst    int           // its size: calls at once
	PenaltyMemory   time.Duration // how long a 429 keeps a private chat's bucket halved
	GroupInterval   time.Duration // per-chat sliding window for chat ids < 0
	GroupBurst      int
	GlobalRate      rate.Limit // all chats together: GlobalBurst calls per GlobalBurst/GlobalRate
	GlobalBurst     int
	TypingInterval  time.Duration // at most one typing action per chat per interval

	BackoffMin        time.Duration // transport/5xx retry backoff, doubling
	BackoffMax        time.Duration // its cap for low-priority work
	HighBackoffMax    time.Duration // its cap for high-priority work
	ProbeInterval     time.Duration // getMe probes while Telegram seems down
	RateLimitJitter   time.Duration // upper bound of the jitter added to retry_after
	CallTimeout       time.Duration // per Telegram request
	OvertakeAfter     time.Duration // see DefaultOvertakeAfter; < 0: never
	ForbiddenCooldown time.Duration // how long a 403 chat is failed without calls
	SplitLimit        int           // see DefaultSplitLimit
	Drafts            DraftOptions  // pacing of drafts (draft.go)

	// Jitter returns a random duration in [0, max). Tests make it
	// deterministic.
	Jitter func(max time.Duration) time.Duration
}

func (opt Options) withDefaults() Options {
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if opt.Logger == nil {
		l := zerolog.Nop()
		opt.Logger = &l
	}
	if opt.Clock == nil {
		opt.Clock = realClock{}
	}
	setDur(&opt.PrivateInterval, DefaultPrivateInterval)
	setInt(&opt.PrivateBurst, DefaultPrivateBurst)
	setDur(&opt.PenaltyMemory, DefaultPenaltyMemory)
	setDur(&opt.GroupInterval, DefaultGroupInterval)
	setInt(&opt.GroupBurst, DefaultGroupBurst)
	if opt.GlobalRate <= 0 {
		opt.GlobalRate = DefaultGlobalRate
	}
	setInt(&opt.GlobalBurst, DefaultGlobalBurst)
	setDur(&opt.TypingInterval, DefaultTypingInterval)
	setDur(&opt.BackoffMin, DefaultBackoffMin)
	setDur(&opt.BackoffMax, DefaultBackoffMax)
	setDur(&opt.HighBackoffMax, DefaultHighBackoffMax)
	setDur(&opt.ProbeInterval, DefaultProbeInterval)
	setDur(&opt.RateLimitJitter, DefaultRateLimitJitter)
	setDur(&opt.CallTimeout, DefaultCallTimeout)
	if opt.OvertakeAfter == 0 {
		opt.OvertakeAfter = DefaultOvertakeAfter
	}
	setDur(&opt.ForbiddenCooldown, DefaultForbiddenCooldown)
	setInt(&opt.SplitLimit, DefaultSplitLimit)
	if opt.Jitter == nil {
		opt.Jitter = func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return rand.N(max)
		}
	}
	return opt
}

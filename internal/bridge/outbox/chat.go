package outbox

import (
	"encoding/json"
	"hash/maphash"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

type opKind uint8

const (
	kindSend opKind = iota
	kindEdit
	kindDelete
	kindTyping
)

var kindNames = [...]string{"send", "edit", "delete", "typing"}

func (k opKind) String() string { return kindNames[k] }

// op is one queued Telegram operation. While queued it may be changed by
// enqueuers under the chat mutex (coalescing); once taken by the worker it is
// no longer reachable from Message.pendingEdit, so the worker owns it.
type op struct {
	kind    opKind
	prio    Priority
	key     ChatKey
	msg     *Message // nil for typing
	text    string
	kb      json.RawMessage
	replyTo MessageID
	silent  bool
	journal JournalID
	pending *Pending
	log     *zerolog.Logger
	seq     uint64    // enqueue order within the chat
	at      time.Time // typing: when requested
	// since is when the op was first queued; a coalescing edit keeps it,
	// so for a progress edit it is how long the message has shown stale
	// content. The global budget goes to the stalest first.
	since  time.Time
	callAt time.Time // when the current attempt was counted in the chat's window
	gslot  *slot     // the current attempt's global slot, released when its call ends
	mark   CallMark  // when the current attempt was sent, among failures

	plain        bool      // send without parse_mode (after a parse error)
	asSend       bool      // edit target gone: deliver as a new message
	replacedFrom MessageID // the id the handle had before asSend
	chunks       []string  // last-resort split of an over-long text
	chunk        int       // next chunk to deliver
	first        Result    // outcome of chunk 0, reported at the end

	hash   uint64
	hashed bool

	media []MediaFile // a media send's files (media.go); nil for text

	// merged is an edit made while this send still waited in its queue:
	// the send went out with the edit's content instead (one call, not
	// two), and the edit resolves with the send.
	merged *Pending
}

// counts is how many calls Telegram counts op as: one per item of an album.
func (op *op) counts() int {
	if op.kind == kindSend && len(op.media) > 1 {
		return len(op.media)
	}
	return 1
}

// takeSlot hands over the attempt's global slot for release, once.
func (op *op) takeSlot() *slot {
	s := op.gslot
	op.gslot = nil
	return s
}

var hashSeed = maphash.MakeSeed()

// contentHash identifies what a message shows, so identical edits can be
// skipped without keeping the text around.
func (op *op) contentHash() uint64 {
	if !op.hashed {
		var h maphash.Hash
		h.SetSeed(hashSeed)
		h.WriteString(op.text)
		h.WriteByte(0)
		h.Write(op.kb)
		op.hash, op.hashed = h.Sum64(), true
	}
	return op.hash
}

// mergeable reports whether op is a send still free to take another
// content: not journaled (the journal holds what a replay would send), no
// media, not split or turned to plain text after an error.
func (op *op) mergeable() bool {
	return op.kind == kindSend && op.journal == 0 && op.media == nil && op.chunks == nil && !op.plain
}

// settleMerged resolves the edit merged into a send as the send turned out.
func (op *op) settleMerged(res Result, err error) {
	switch p := op.merged; {
	case p == nil:
	case err != nil:
		p.resolve(Result{}, &UnsentError{Err: err})
	default:
		p.resolve(Result{MessageID: res.MessageID, Outcome: OutcomeEdited}, nil)
	}
	op.merged = nil
}

// sendsMessage reports whether executing op calls sendMessage.
func (op *op) sendsMessage() bool {
	return op.kind == kindSend || (op.kind == kindEdit && (op.asSend || op.chunk > 0))
}

// chat is the state of one Telegram chat (all its topics): queues, pacing,
// pause and backoff. One worker goroutine owns the I/O.
type chat struct {
	id   int64
	wake chan struct{}
	lim  chatLimit // touched only by the worker and under mu

	mu          sync.Mutex
	high, low   []*op
	typing      *op
	seq         uint64
	pausedUntil time.Time // 429
	// Backoff after transport errors and 5xx: high-priority work retries
	// sooner than progress edits. Both end early once Telegram is known to
	// be back (health.go).
	retryHigh, retryLow time.Time
	failures            int       // consecutive transport failures
	failMark            uint64    // the failure epoch of the latest one (health.go)
	clearedAt           time.Time // when a success elsewhere last ended the backoff
	// inflight is a low-priority op (or typing) whose call runs on its own
	// goroutine, so that a hanging progress edit never holds up an answer:
	// high-priority work starts beside it from overtakeAt.
	inflight     *op
	overtakeAt   time.Time
	blockedUntil time.Time // 403 / migration
	blockErr     error
	lastTyping   time.Time
	gone         bool // the worker retired; enqueuers must look again
}

func (o *Outbox) newChat(id int64) *chat {
	var lim chatLimit = chatWindow{newWindow(o.opt.GroupBurst, o.opt.GroupInterval)}
	if id >= 0 {
		b := newBucket(o.opt.PrivateBurst, o.opt.PrivateInterval, o.opt.PenaltyMemory)
		o.learnt.apply(id, b, o.clock.Now())
		lim = b
	}
	return &chat{id: id, wake: make(chan struct{}, 1), lim: lim}
}

func (c *chat) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *chat) blocked(now time.Time) error {
	if c.blockErr != nil && now.Before(c.blockedUntil) {
		return c.blockErr
	}
	return nil
}

func (c *chat) queue(p Priority) *[]*op {
	if p == High {
		return &c.high
	}
	return &c.low
}

func (c *chat) push(op *op, now time.Time) {
	c.seq++
	op.seq = c.seq
	if op.since.IsZero() {
		op.since = now
	}
	q := c.queue(op.prio)
	*q = append(*q, op)
}

// pushFront puts an op that must be retried back at the head of its queue, so
// that retries never reorder a chat's messages.
func (c *chat) pushFront(op *op) {
	q := c.queue(op.prio)
	*q = append(*q, nil)
	copy((*q)[1:], *q)
	(*q)[0] = op
}

func (c *chat) remove(op *op) {
	q := c.queue(op.prio)
	for i, x := range *q {
		if x == op {
			*q = deleteAt(*q, i)
			return
		}
	}
}

func deleteAt(q []*op, i int) []*op {
	copy(q[i:], q[i+1:])
	q[len(q)-1] = nil // let the op be collected
	return q[:len(q)-1]
}

func (c *chat) empty() bool {
	return len(c.high) == 0 && len(c.low) == 0 && c.typing == nil && c.inflight == nil
}

// gate is when the chat may call again: after a 429 pause and the backoff
// for the priority of the op that would run.
func (c *chat) gate(high bool) time.Time {
	g, r := c.pausedUntil, c.retryLow
	if high {
		r = c.retryHigh
	}
	if r.After(g) {
		g = r
	}
	return g
}

type readiness uint8

const (
	ready readiness = iota
	waiting
	dropped
)

// check decides whether a queued op can run now, and resolves ops that need
// no request any more. busy is the message of the call in flight, if any:
// two calls for one message never overlap, so they land in order.
func (o *Outbox) check(op *op, busy *Message) readiness {
	m := op.msg
	if m != nil && m == busy {
		return waiting
	}
	switch op.kind {
	case kindEdit:
		if op.chunk > 0 {
			return ready // a continuation chunk is a plain send
		}
		switch {
		case m.gone:
			// Queued while an earlier edit found the message gone.
			op.pending.resolve(Result{MessageID: m.ID(), Outcome: OutcomeGone}, nil)
		case m.deleted || m.deleteQueued:
			op.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
		case m.unsent != nil && !op.asSend:
			op.pending.resolve(Result{}, &UnsentError{Err: m.unsent})
		case op.asSend:
			return ready
		case m.ID() == 0:
			return waiting // its send (or replacement) has not completed yet
		case op.chunks == nil && m.hasShown && m.shown == op.contentHash():
			o.stats.unchanged.Add(1)
			op.pending.resolve(Result{MessageID: m.ID(), Outcome: OutcomeUnchanged}, nil)
		default:
			return ready
		}
	case kindDelete:
		switch {
		case m.deleted:
			op.pending.resolve(Result{Outcome: OutcomeDeleted}, nil)
		case m.unsent != nil:
			op.pending.resolve(Result{}, &UnsentError{Err: m.unsent})
		case m.ID() == 0:
			return waiting
		default:
			return ready
		}
	default:
		return ready
	}
	if m.pendingEdit == op {
		m.pendingEdit = nil
	}
	return dropped
}

// scan returns the index of the first runnable op in q, dropping ops that
// resolved without a request on the way.
func (o *Outbox) scan(c *chat, q *[]*op) int {
	var busy *Message
	if c.inflight != nil {
		busy = c.inflight.msg
	}
	for i := 0; i < len(*q); {
		switch o.check((*q)[i], busy) {
		case ready:
			return i
		case waiting:
			i++
		case dropped:
			*q = deleteAt(*q, i)
		}
	}
	return -1
}

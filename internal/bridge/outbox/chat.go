package outbox

import (
	"encoding/json"
	"hash/maphash"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
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

	plain        bool      // send without parse_mode (after a parse error)
	asSend       bool      // edit target gone: deliver as a new message
	replacedFrom MessageID // the id the handle had before asSend
	chunks       []string  // last-resort split of an over-long text
	chunk        int       // next chunk to deliver
	first        Result    // outcome of chunk 0, reported at the end

	hash   uint64
	hashed bool

	media []MediaFile // a media send's files (media.go); nil for text
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

// sendsMessage reports whether executing op calls sendMessage.
func (op *op) sendsMessage() bool {
	return op.kind == kindSend || (op.kind == kindEdit && (op.asSend || op.chunk > 0))
}

// chat is the state of one Telegram chat (all its topics): queues, pacing,
// pause and backoff. One worker goroutine owns the I/O.
type chat struct {
	id   int64
	wake chan struct{}
	lim  *window // touched only by the worker and under mu

	mu           sync.Mutex
	high, low    []*op
	typing       *op
	seq          uint64
	pausedUntil  time.Time // 429
	retryAt      time.Time // transport backoff
	failures     int       // consecutive transport failures
	blockedUntil time.Time // 403 / migration
	blockErr     error
	lastTyping   time.Time
	gone         bool // the worker retired; enqueuers must look again
}

func (o *Outbox) newChat(id int64) *chat {
	interval, burst := o.opt.PrivateInterval, o.opt.PrivateBurst
	if id < 0 {
		interval, burst = o.opt.GroupInterval, o.opt.GroupBurst
	}
	return &chat{id: id, wake: make(chan struct{}, 1), lim: newWindow(burst, interval)}
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

func (c *chat) push(op *op) {
	c.seq++
	op.seq = c.seq
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

func (c *chat) empty() bool { return len(c.high) == 0 && len(c.low) == 0 && c.typing == nil }

type readiness uint8

const (
	ready readiness = iota
	waiting
	dropped
)

// check decides whether a queued op can run now, and resolves ops that need
// no request any more.
func (o *Outbox) check(op *op) readiness {
	m := op.msg
	switch op.kind {
	case kindEdit:
		if op.chunk > 0 {
			return ready // a continuation chunk is a plain send
		}
		switch {
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
func (o *Outbox) scan(q *[]*op) int {
	for i := 0; i < len(*q); {
		switch o.check((*q)[i]) {
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

type next uint8

const (
	nextNone next = iota
	nextMessage
	nextTyping
)

// prepare drops what needs no request and says what runs next. Called with
// c.mu held.
func (o *Outbox) prepare(c *chat, now time.Time) next {
	if c.typing != nil && now.Sub(c.typing.at) > o.opt.TypingInterval {
		c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
		c.typing = nil
	}
	if o.scan(&c.high) >= 0 || o.scan(&c.low) >= 0 {
		return nextMessage
	}
	if c.typing != nil {
		return nextTyping
	}
	return nextNone
}

// take removes and returns the op to run, by priority then FIFO. It returns
// nil when what was prepared is no longer what should run.
func (o *Outbox) take(c *chat, want next, now time.Time) *op {
	got := o.prepare(c, now)
	if got != want {
		return nil
	}
	if want == nextTyping {
		t := c.typing
		c.typing = nil
		return t
	}
	for _, q := range []*[]*op{&c.high, &c.low} {
		if i := o.scan(q); i >= 0 {
			op := (*q)[i]
			*q = deleteAt(*q, i)
			if op.msg != nil && op.msg.pendingEdit == op {
				op.msg.pendingEdit = nil
			}
			return op
		}
	}
	return nil
}

// settleAt is when the chat's pacing state is back to what a fresh chat would
// have, so the worker can retire without letting a newcomer burst past the
// limits or a pause.
func (o *Outbox) settleAt(c *chat, now time.Time) time.Time {
	t := now
	for _, u := range []time.Time{c.pausedUntil, c.retryAt, c.lastTyping.Add(o.opt.TypingInterval)} {
		if u.After(t) {
			t = u
		}
	}
	if c.blockErr != nil && c.blockedUntil.After(t) {
		t = c.blockedUntil
	}
	if u := c.lim.settled(now); u.After(t) {
		t = u
	}
	return t
}

// run is the chat's worker: wait until the chat may send, take the most
// urgent op, execute it, repeat; retire when idle and settled.
func (o *Outbox) run(c *chat) {
	defer o.wg.Done()
	for {
		now := o.clock.Now()
		c.mu.Lock()
		nx := o.prepare(c, now)
		if nx == nextNone {
			idle := c.empty()
			settle := o.settleAt(c, now)
			c.mu.Unlock()
			if idle && (o.closing.Load() || !settle.After(now)) {
				if o.retire(c) {
					return
				}
				continue
			}
			select {
			case <-c.wake:
				continue // work arrived meanwhile; don't start a timer for nothing
			default:
			}
			var timer <-chan time.Time
			if idle {
				timer = o.clock.After(settle.Sub(now))
			} // else: only ops waiting for a message id are queued; they need a wake.
			select {
			case <-c.wake:
			case <-timer:
			case <-o.runCtx.Done():
				o.abort(c, nil)
				return
			}
			continue
		}
		gate := c.pausedUntil
		if c.retryAt.After(gate) {
			gate = c.retryAt
		}
		c.mu.Unlock()
		if gate.After(now) {
			if !o.sleep(gate.Sub(now)) {
				o.abort(c, nil)
				return
			}
			continue
		}
		switch nx {
		case nextMessage:
			// Only low-priority work queued: leave a slot for a high op, so
			// an answer or approval never waits behind a progress edit.
			keep := 0
			if !o.highQueued(c) {
				keep = 1
			}
			c.mu.Lock()
			wait := c.lim.wait(now, keep)
			c.mu.Unlock()
			if wait > 0 {
				select {
				case <-c.wake: // a high op may have arrived: re-decide
				case <-o.clock.After(wait):
				case <-o.runCtx.Done():
					o.abort(c, nil)
					return
				}
				continue
			}
			c.mu.Lock()
			c.lim.add(now)
			c.mu.Unlock()
			if !o.reserve(o.global, o.clock.Now()) {
				o.abort(c, nil)
				return
			}
		case nextTyping:
			if !o.spareGlobalToken(now) {
				c.mu.Lock()
				if c.typing != nil {
					c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
					c.typing = nil
				}
				c.mu.Unlock()
				continue
			}
		}
		c.mu.Lock()
		op := o.take(c, nx, o.clock.Now())
		c.mu.Unlock()
		if op == nil {
			continue // the queue changed while pacing; a token is lost, no harm
		}
		if !o.execute(c, op) {
			o.abort(c, op)
			return
		}
	}
}

// highQueued reports whether a high-priority op waits in c.
func (o *Outbox) highQueued(c *chat) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.high) > 0
}

// spareGlobalToken takes a global token for a typing action only if at least
// half the global burst is available, so that with many busy chats typing
// indicators give way instead of delaying messages of other chats.
func (o *Outbox) spareGlobalToken(now time.Time) bool {
	spare := float64(max(1, o.opt.GlobalBurst/2))
	return o.global.TokensAt(now) >= spare && o.global.AllowN(now, 1)
}

// reserve takes a token from lim, sleeping as long as needed. It reports false
// if the outbox was stopped meanwhile.
func (o *Outbox) reserve(lim *rate.Limiter, now time.Time) bool {
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 && !o.sleep(d) {
		r.CancelAt(o.clock.Now())
		return false
	}
	return true
}

func (o *Outbox) sleep(d time.Duration) bool {
	if d <= 0 {
		return o.runCtx.Err() == nil
	}
	select {
	case <-o.clock.After(d):
		return true
	case <-o.runCtx.Done():
		return false
	}
}

// retire removes an idle chat so that idle chats cost nothing. The shard lock
// is taken before the chat lock, the same order lockChat's creation uses.
func (o *Outbox) retire(c *chat) bool {
	sh := &o.shards[uint64(c.id)%numShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.empty() {
		return false
	}
	c.gone = true
	delete(sh.chats, c.id)
	return true
}

// abort ends the worker when Close gave up: everything still queued (and the
// op that was in flight) is reported as unflushed and fails with ErrClosed.
func (o *Outbox) abort(c *chat, inflight *op) {
	sh := &o.shards[uint64(c.id)%numShards]
	sh.mu.Lock()
	c.mu.Lock()
	c.gone = true
	delete(sh.chats, c.id)
	ops := make([]*op, 0, len(c.high)+len(c.low)+1)
	if inflight != nil {
		ops = append(ops, inflight)
	}
	ops = append(append(ops, c.high...), c.low...)
	c.high, c.low = nil, nil
	if c.typing != nil {
		c.typing.pending.resolve(Result{}, ErrClosed)
		c.typing = nil
	}
	c.mu.Unlock()
	sh.mu.Unlock()

	o.unflushedMu.Lock()
	for _, op := range ops {
		o.unflushed = append(o.unflushed, UnflushedOp{
			Key: op.key, Kind: op.kind.String(), Priority: op.prio, Tag: op.tagOf(), Journal: op.journal,
		})
	}
	o.unflushedMu.Unlock()
	for _, op := range ops {
		op.pending.resolve(Result{}, ErrClosed)
	}
}

func (op *op) tagOf() string {
	if op.msg != nil {
		return op.msg.tag
	}
	return ""
}

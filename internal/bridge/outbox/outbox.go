package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"
)

// API is the slice of the Telegram client the outbox drives. *bot.Bot
// satisfies it. Implementations must honour ctx cancellation, because Close
// relies on it to bound shutdown.
type API interface {
	SendMessage(ctx context.Context, params *bot.SendMessageParams) (*models.Message, error)
	EditMessageText(ctx context.Context, params *bot.EditMessageTextParams) (*models.Message, error)
	DeleteMessage(ctx context.Context, params *bot.DeleteMessageParams) (bool, error)
	SendChatAction(ctx context.Context, params *bot.SendChatActionParams) (bool, error)
}

var _ API = (*bot.Bot)(nil)

// numShards spreads the chat map over several locks so that enqueues for
// different chats rarely contend.
const numShards = 32

type shard struct {
	mu    sync.RWMutex
	chats map[int64]*chat
}

// Outbox is the single writer of Telegram messages. It is safe for
// concurrent use. Each chat with queued work has one worker goroutine, which
// retires once the chat is idle and its pacing state has fully recovered.
type Outbox struct {
	api   API
	opt   Options
	clock Clock
	gate  *gate
	rec   recovery

	shards  [numShards]shard
	closing atomic.Bool
	runCtx  context.Context
	stopRun context.CancelFunc
	wg      sync.WaitGroup

	unflushedMu sync.Mutex
	unflushed   []UnflushedOp

	drafts draftLanes // draft.go
	learnt learned    // private chats that drew a 429 (bucket.go)

	stats counters
}

// New returns a running outbox that writes through api.
func New(api API, opts Options) *Outbox {
	opts = opts.withDefaults()
	o := &Outbox{api: api, opt: opts, clock: opts.Clock}
	o.rec.kick = make(chan struct{}, 1)
	o.runCtx, o.stopRun = context.WithCancel(context.Background())
	var every time.Duration // rate.Inf: no global limit
	if opts.GlobalRate != rate.Inf {
		every = time.Duration(float64(time.Second) / float64(opts.GlobalRate))
	}
	// The gate's dispatcher is started by a worker, which is counted in
	// wg, so adding to wg cannot race Close's Wait.
	o.gate = newGate(opts.Clock, opts.GlobalBurst, every, maxArrivalDelay, func() {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			o.gate.dispatch(o.runCtx.Done())
		}()
	})
	for i := range o.shards {
		o.shards[i].chats = make(map[int64]*chat)
	}
	return o
}

// Send enqueues a new message and returns its handle at once; the handle's
// Sent() resolves with the message id. Edits may target the handle before it
// is sent: they wait for the id. High-priority sends are journaled first when
// a [Journal] is configured; ctx bounds that write and supplies the logger.
//
// Cancelling ctx does not cancel the send. Enqueued messages are delivered
// until [Outbox.Close] gives up, so that a chat actor shutting down before
// the outbox drains does not lose its final answer.
func (o *Outbox) Send(ctx context.Context, key ChatKey, prio Priority, c Content, opts SendOptions) *Message {
	m := &Message{key: key, tag: opts.Tag, sent: newPending()}
	kb, err := validate(key, c)
	if err != nil {
		m.unsent = err
		m.sent.resolve(Result{}, err)
		return m
	}
	op := &op{
		kind: kindSend, prio: prio, key: key, msg: m,
		text: c.Text, kb: kb, replyTo: opts.ReplyTo, silent: opts.Silent,
		pending: m.sent, log: ctxLogger(ctx),
	}
	if o.opt.Journal != nil && prio == High && !o.closing.Load() {
		o.journalSave(ctx, op, opts.Tag)
	}
	o.enqueue(op)
	return m
}

// Adopt returns a handle for a message sent before (for example one whose id
// was persisted before a restart), so it can be edited or deleted.
// An id ≤ 0 gives a handle whose operations fail with ErrInvalid, instead of
// one whose edits would wait forever for an id.
func (o *Outbox) Adopt(key ChatKey, id MessageID) *Message {
	if id <= 0 || key.Chat == 0 {
		err := fmt.Errorf("%w: adopt message %d in chat %d", ErrInvalid, id, key.Chat)
		return &Message{key: key, unsent: err, sent: resolvedPending(Result{}, err)}
	}
	m := &Message{key: key, sent: resolvedPending(Result{MessageID: id, Outcome: OutcomeSent}, nil)}
	m.id.Store(int64(id))
	return m
}

// Edit replaces the text and keyboard of m. Pending edits of the same message
// coalesce: the latest content wins and superseded edits resolve with
// OutcomeSuperseded. An edit to the content the message already shows costs
// no request. A High edit also lifts a pending Low edit of m to High. An
// edit whose target is gone goes out as a new message, unless m is
// [Message.NoReplace]: it then resolves with OutcomeGone.
func (o *Outbox) Edit(ctx context.Context, m *Message, prio Priority, c Content) *Pending {
	kb, err := validate(m.key, c)
	if err != nil {
		return resolvedPending(Result{}, err)
	}
	ch, err := o.lockChat(m.key.Chat)
	if err != nil {
		return resolvedPending(Result{}, err)
	}
	defer ch.mu.Unlock()
	if err := ch.blocked(o.clock.Now()); err != nil {
		return resolvedPending(Result{}, err)
	}
	switch {
	case m.gone:
		return resolvedPending(Result{MessageID: m.ID(), Outcome: OutcomeGone}, nil)
	case m.deleted || m.deleteQueued:
		return resolvedPending(Result{}, ErrDeleted)
	case m.unsent != nil:
		return resolvedPending(Result{}, &UnsentError{Err: m.unsent})
	}
	p := newPending()
	if s := m.queuedSend; s != nil && s.mergeable() {
		// Not sent yet: it goes out showing this content, one call
		// instead of a send and an edit.
		if s.merged != nil {
			s.merged.resolve(Result{Outcome: OutcomeSuperseded}, nil)
		}
		s.text, s.kb, s.hashed, s.merged = c.Text, kb, false, p
		o.stats.coalesced.Add(1)
		if prio > s.prio {
			ch.remove(s)
			s.prio = prio
			ch.push(s, o.clock.Now())
		}
		ch.signal()
		return p
	}
	if e := m.pendingEdit; e != nil {
		e.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
		o.stats.coalesced.Add(1)
		e.text, e.kb, e.pending, e.log = c.Text, kb, p, ctxLogger(ctx)
		e.plain, e.hashed = false, false
		if prio > e.prio {
			ch.remove(e)
			e.prio = prio
			ch.push(e, o.clock.Now())
		}
	} else {
		e := &op{kind: kindEdit, prio: prio, key: m.key, msg: m, text: c.Text, kb: kb, pending: p, log: ctxLogger(ctx)}
		m.pendingEdit = e
		ch.push(e, o.clock.Now())
	}
	ch.signal()
	return p
}

// Withdraw drops m's send if it is still queued, so it is never sent (as
// Delete would), and reports whether it did. A send already taken for its
// call, or made, is left alone: the caller then finishes the message as
// one the user may have seen.
func (o *Outbox) Withdraw(m *Message) bool {
	ch, err := o.lockChat(m.key.Chat)
	if err != nil {
		return false
	}
	s, ok := o.dropQueuedSend(ch, m)
	ch.mu.Unlock()
	if ok {
		o.finishDropped(s)
	}
	return ok
}

// dropQueuedSend removes m's send if it still waits in ch's queue. Called
// with ch.mu held.
func (o *Outbox) dropQueuedSend(ch *chat, m *Message) (*op, bool) {
	s := m.queuedSend
	if s == nil || s.media != nil || m.deleted || m.deleteQueued || ch.blocked(o.clock.Now()) != nil {
		return nil, false
	}
	ch.remove(s)
	m.queuedSend, m.deleted = nil, true
	if s.merged != nil {
		s.merged.resolve(Result{Outcome: OutcomeSuperseded}, nil)
	}
	o.stats.dropped.Add(1)
	return s, true
}

// finishDropped settles a send dropped before it went out: a journaled one
// is not replayed, and its Sent() fails with ErrDeleted.
func (o *Outbox) finishDropped(s *op) {
	if s.journal != 0 {
		o.journalDone(s)
	}
	s.pending.resolve(Result{}, ErrDeleted)
}

// Delete removes m. Pending edits of m are dropped (OutcomeSuperseded). A
// message whose send is still queued is never sent: no call is made, its
// Sent() fails with ErrDeleted and a journaled one is not replayed. A
// message Telegram no longer has counts as deleted; one it refuses to
// delete (older than 48 h) fails.
func (o *Outbox) Delete(ctx context.Context, m *Message, prio Priority) *Pending {
	ch, err := o.lockChat(m.key.Chat)
	if err != nil {
		return resolvedPending(Result{}, err)
	}
	if s, ok := o.dropQueuedSend(ch, m); ok {
		// Deleted before it went out: neither call is made, and a
		// journaled send is not replayed either.
		ch.mu.Unlock()
		o.finishDropped(s)
		return resolvedPending(Result{Outcome: OutcomeDeleted}, nil)
	}
	defer ch.mu.Unlock()
	if err := ch.blocked(o.clock.Now()); err != nil {
		return resolvedPending(Result{}, err)
	}
	switch {
	case m.deleted || m.deleteQueued:
		return resolvedPending(Result{Outcome: OutcomeDeleted}, nil)
	case m.unsent != nil:
		return resolvedPending(Result{}, &UnsentError{Err: m.unsent})
	}
	if e := m.pendingEdit; e != nil {
		e.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
		ch.remove(e)
		m.pendingEdit = nil
		if e.asSend {
			// The original message is already gone and its replacement
			// will now never be sent: nothing is left to delete.
			m.deleted = true
			return resolvedPending(Result{Outcome: OutcomeDeleted}, nil)
		}
	}
	m.deleteQueued = true
	p := newPending()
	ch.push(&op{kind: kindDelete, prio: prio, key: m.key, msg: m, pending: p, log: ctxLogger(ctx)}, o.clock.Now())
	ch.signal()
	return p
}

// Typing shows the typing indicator in the chat. It is best effort: at most
// one per chat per TypingInterval is sent, only when no message operation of
// the chat is waiting (a message is better evidence of life, and typing must
// never delay one), and a request that waits longer than TypingInterval, or
// that a newer sent message made moot, is dropped with OutcomeSkipped. Typing
// does not use the chat's message budget, and goes only while the global
// window is under a sixth full (otherwise it is skipped), taking none of its
// slots, so many chats' typing indicators cannot slow anyone's messages.
func (o *Outbox) Typing(ctx context.Context, key ChatKey) *Pending {
	ch, err := o.lockChat(key.Chat)
	if err != nil {
		return resolvedPending(Result{}, err)
	}
	defer ch.mu.Unlock()
	now := o.clock.Now()
	if err := ch.blocked(now); err != nil {
		return resolvedPending(Result{}, err)
	}
	if !ch.lastTyping.IsZero() && now.Before(ch.lastTyping.Add(o.opt.TypingInterval)) {
		return resolvedPending(Result{Outcome: OutcomeSkipped}, nil)
	}
	p := newPending()
	if t := ch.typing; t != nil {
		t.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
	}
	ch.seq++
	ch.typing = &op{kind: kindTyping, prio: Low, key: key, pending: p, log: ctxLogger(ctx), at: now, seq: ch.seq}
	ch.signal()
	return p
}

// Unblock forgets a 403 or migration verdict for chat, for example when a
// user who had blocked the bot writes to it again.
func (o *Outbox) Unblock(chat int64) {
	sh := &o.shards[uint64(chat)%numShards]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	// A chat without a worker has no verdict: the worker of a blocked chat
	// stays until the cooldown ends.
	if c := sh.chats[chat]; c != nil {
		c.mu.Lock()
		c.blockedUntil, c.blockErr = time.Time{}, nil
		c.signal()
		c.mu.Unlock()
	}
}

// Close stops accepting operations and drains: everything queued is still
// delivered (pacing and 429 pauses included) until ctx ends. Typing requests
// are dropped. If ctx ends first, in-flight requests are cancelled and the
// result is an *UnflushedError listing what was not delivered; journaled
// sends among those stay journaled for [Outbox.Restore]. A worker whose
// call ignores the cancellation (a read stuck in the kernel) is given up
// on after CloseGrace: Close returns anyway, counting it in
// UnflushedError.Stuck, and what it held stays journaled. Calling Close
// again returns ErrClosed.
func (o *Outbox) Close(ctx context.Context) error {
	if !o.closing.CompareAndSwap(false, true) {
		return ErrClosed
	}
	o.closeDrafts()
	// Taking the write locks is also the barrier after which no enqueue
	// can start a new worker, so wg.Wait below cannot race wg.Add.
	for _, c := range o.allChats(true) {
		c.mu.Lock()
		if c.typing != nil {
			c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
			c.typing = nil
		}
		c.signal()
		c.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	var cause error
	stuck := 0
	select {
	case <-done:
	case <-ctx.Done():
		cause = ctx.Err()
		o.stopRun()
		// Real time, not o.clock: this bounds goroutines stuck in real
		// calls, whatever clock paces the messages.
		t := time.NewTimer(CloseGrace)
		select {
		case <-done:
		case <-t.C:
			// At least one: a progress edit's own goroutine may be the
			// one stuck after its chat's worker left.
			stuck = max(1, len(o.allChats(false)))
		}
		t.Stop()
	}
	o.stopRun()
	o.unflushedMu.Lock()
	defer o.unflushedMu.Unlock()
	if len(o.unflushed) == 0 && stuck == 0 {
		return nil
	}
	if cause == nil {
		cause = ErrClosed
	}
	return &UnflushedError{Ops: append([]UnflushedOp(nil), o.unflushed...), Stuck: stuck, Cause: cause}
}

// CloseGrace is how long [Outbox.Close], once its context ended, waits for
// the workers to notice the cancellation before it gives up on them.
const CloseGrace = time.Second

func validate(key ChatKey, c Content) (json.RawMessage, error) {
	if key.Chat == 0 {
		return nil, fmt.Errorf("%w: chat id 0", ErrInvalid)
	}
	if c.Text == "" {
		return nil, fmt.Errorf("%w: empty text", ErrInvalid)
	}
	if c.Keyboard == nil {
		return nil, nil
	}
	if raw, ok := c.Keyboard.(json.RawMessage); ok {
		return raw, nil
	}
	kb, err := json.Marshal(c.Keyboard)
	if err != nil {
		return nil, fmt.Errorf("%w: marshal keyboard: %w", ErrInvalid, err)
	}
	if string(kb) == "null" {
		return nil, nil
	}
	return kb, nil
}

// ctxLogger returns the logger carried by ctx, or nil so the outbox falls
// back to Options.Logger.
func ctxLogger(ctx context.Context) *zerolog.Logger {
	if ctx == nil {
		return nil
	}
	l := zerolog.Ctx(ctx)
	if l.GetLevel() == zerolog.Disabled {
		return nil
	}
	return l
}

func (o *Outbox) logger(op *op) *zerolog.Logger {
	if op != nil && op.log != nil {
		return op.log
	}
	return o.opt.Logger
}

// allChats lists the chats with a worker. barrier takes each shard's write
// lock, which orders the listing after every enqueue in progress.
func (o *Outbox) allChats(barrier bool) []*chat {
	var chats []*chat
	for i := range o.shards {
		sh := &o.shards[i]
		lock, unlock := sh.mu.RLock, sh.mu.RUnlock
		if barrier {
			lock, unlock = sh.mu.Lock, sh.mu.Unlock
		}
		lock()
		for _, c := range sh.chats {
			chats = append(chats, c)
		}
		unlock()
	}
	return chats
}

// lockChat returns the chat's state with its mutex held, starting a worker if
// the chat has none.
func (o *Outbox) lockChat(id int64) (*chat, error) {
	sh := &o.shards[uint64(id)%numShards]
	for {
		sh.mu.RLock()
		c := sh.chats[id]
		sh.mu.RUnlock()
		if c == nil {
			sh.mu.Lock()
			if o.closing.Load() {
				sh.mu.Unlock()
				return nil, ErrClosed
			}
			if c = sh.chats[id]; c == nil {
				c = o.newChat(id)
				sh.chats[id] = c
				o.wg.Add(1)
				go o.run(c)
			}
			sh.mu.Unlock()
		}
		c.mu.Lock()
		if c.gone {
			// The worker retired between lookup and lock; look again.
			c.mu.Unlock()
			continue
		}
		if o.closing.Load() {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		return c, nil
	}
}

func (o *Outbox) enqueue(op *op) {
	c, err := o.lockChat(op.key.Chat)
	if err == nil {
		err = c.blocked(o.clock.Now())
		if err == nil {
			c.push(op, o.clock.Now())
			if op.kind == kindSend && op.msg != nil {
				op.msg.queuedSend = op
			}
			c.signal()
		}
		c.mu.Unlock()
	}
	if err == nil {
		return
	}
	if op.msg != nil {
		op.msg.unsent = err
	}
	// A closed outbox keeps the journal entry for replay; anything else is a
	// verdict about the chat that replaying would only repeat.
	if op.journal != 0 && !errors.Is(err, ErrClosed) {
		o.journalDone(op)
	}
	op.pending.resolve(Result{}, err)
}

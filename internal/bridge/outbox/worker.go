package outbox

import "time"

type next uint8

const (
	nextNone next = iota
	nextHigh
	nextLow
	nextTyping
)

// prepare drops what needs no request and says what runs next, and the op
// it would be (nil for typing). While a low-priority call is in flight,
// nothing else starts until it is done or counts as hanging
// (OvertakeAfter); then high-priority work may start beside it. Called with
// c.mu held.
func (o *Outbox) prepare(c *chat, now time.Time) (next, *op) {
	if c.typing != nil && now.Sub(c.typing.at) > o.opt.TypingInterval {
		c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
		c.typing = nil
	}
	if i := o.scan(c, &c.high); i >= 0 {
		if c.inflight != nil && (o.opt.OvertakeAfter < 0 || now.Before(c.overtakeAt)) {
			// Calls of one chat in flight together could meet a 429 for
			// one of them only after the other went out, so the answer
			// waits for a progress edit unless that one hangs.
			return nextNone, nil
		}
		return nextHigh, c.high[i]
	}
	if c.inflight != nil {
		return nextNone, nil
	}
	if i := o.scan(c, &c.low); i >= 0 {
		return nextLow, c.low[i]
	}
	if c.typing != nil {
		return nextTyping, nil
	}
	return nextNone, nil
}

// take removes and returns the op to run, by priority then FIFO. It returns
// nil when what was prepared is no longer what should run; a high op that
// arrived while a low one was being paced runs in its place.
func (o *Outbox) take(c *chat, want next, now time.Time) *op {
	got, _ := o.prepare(c, now)
	if got == nextNone || got != want && (want != nextLow || got != nextHigh) {
		return nil
	}
	if got == nextTyping {
		t := c.typing
		c.typing = nil
		return t
	}
	q := &c.low
	if got == nextHigh {
		q = &c.high
	}
	i := o.scan(c, q)
	op := (*q)[i]
	*q = deleteAt(*q, i)
	if op.msg != nil && op.msg.pendingEdit == op {
		op.msg.pendingEdit = nil
	}
	if op.msg != nil && op.msg.queuedSend == op {
		op.msg.queuedSend = nil
	}
	return op
}

// settleAt is when the chat's pacing state is back to what a fresh chat would
// have, so the worker can retire without letting a newcomer burst past the
// limits or a pause.
func (o *Outbox) settleAt(c *chat, now time.Time) time.Time {
	t := now
	for _, u := range []time.Time{c.pausedUntil, c.retryHigh, c.retryLow, c.lastTyping.Add(o.opt.TypingInterval)} {
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

// run is the chat's worker: wait until the chat may call and the global
// budget grants a slot, take the most urgent op, execute it, repeat; retire
// when idle and settled. High-priority calls run on the worker; low-priority
// ones on a goroutine of their own, one at a time, so that a progress edit
// that hangs until its timeout does not hold up the answer.
func (o *Outbox) run(c *chat) {
	defer o.wg.Done()
	for {
		now := o.clock.Now()
		c.mu.Lock()
		nx, cand := o.prepare(c, now)
		if nx == nextNone {
			idle := c.empty()
			settle := o.settleAt(c, now)
			var overtake time.Time // high work may overtake the call in flight once it hangs
			if c.inflight != nil && len(c.high) > 0 && o.opt.OvertakeAfter >= 0 {
				overtake = c.overtakeAt
			}
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
			switch {
			case idle:
				timer = o.clock.After(settle.Sub(now))
			case !overtake.IsZero():
				timer = o.clock.After(overtake.Sub(now))
			} // else: what is queued waits for a message id or for the call in flight; both wake c.
			if !o.await(c, timer) {
				return
			}
			continue
		}
		gate := c.gate(nx == nextHigh)
		// Only low-priority work is ready: it leaves part of the budget
		// to high ops, so an answer or approval never waits behind an edit.
		wait := c.lim.wait(now, nx != nextHigh)
		c.mu.Unlock()
		if gate.After(now) {
			wait = max(wait, gate.Sub(now))
		}
		var gslot *slot // the global slot of the call about to be made
		if nx == nextTyping {
			// Typing is best effort: it neither waits nor uses the chat's
			// message budget, and goes only while the global window has
			// plenty free (gate.spare), taking none of its slots.
			if gate.After(now) || !o.gate.spare() {
				c.mu.Lock()
				if c.typing != nil {
					c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
					c.typing = nil
				}
				c.mu.Unlock()
				continue
			}
		} else {
			if wait > 0 {
				// A wake re-decides: a high op may have arrived, or the
				// backoff may have ended (Reachable).
				if !o.await(c, o.clock.After(wait)) {
					return
				}
				continue
			}
			prio := Low
			if nx == nextHigh {
				prio = High
			}
			t := o.gate.acquire(prio, cand.since, cand.counts())
			select {
			case <-t.granted:
			case <-c.wake:
				if o.gate.cancel(t) {
					continue
				}
			case <-o.runCtx.Done():
				if !o.gate.cancel(t) {
					o.gate.release(t.slot)
				}
				o.abort(c, nil)
				return
			}
			gslot = t.slot
		}
		c.mu.Lock()
		at := o.clock.Now()
		if nx != nextTyping && c.gate(nx == nextHigh).After(at) {
			// A call that finished meanwhile brought a 429 or a failure.
			c.mu.Unlock()
			o.gate.release(gslot)
			continue
		}
		op := o.take(c, nx, at)
		if op == nil {
			c.mu.Unlock()
			o.gate.release(gslot)
			continue // the queue changed while pacing; a global slot is wasted, no harm
		}
		if op.kind != kindTyping {
			c.lim.add(at)
			op.callAt, op.gslot = at, gslot
		}
		op.mark = o.CallStarted()
		async := op.prio == Low
		if async {
			c.inflight, c.overtakeAt = op, at.Add(o.opt.OvertakeAfter)
			o.wg.Add(1) // this worker is counted, so Close never waits on zero meanwhile
		}
		c.mu.Unlock()
		if o.opt.Dispatched != nil && op.kind != kindTyping {
			o.opt.Dispatched(op.dispatch())
		}
		if async {
			go o.executeAsync(c, op)
			continue
		}
		if !o.execute(c, op) {
			o.abort(c, op)
			return
		}
	}
}

// await blocks until c is woken or timer fires. It reports false when the
// outbox was stopped, after aborting c.
func (o *Outbox) await(c *chat, timer <-chan time.Time) bool {
	select {
	case <-c.wake:
	case <-timer:
	case <-o.runCtx.Done():
		o.abort(c, nil)
		return false
	}
	return true
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
	o.forgetFailures(c)
	return true
}

// forgetFailures drops a leaving chat from the recovery count. Called with
// c.mu held.
func (o *Outbox) forgetFailures(c *chat) { o.reached(c) }

// abort ends the worker when Close gave up: everything still queued (and the
// op that was in flight) is reported as unflushed and fails with ErrClosed.
func (o *Outbox) abort(c *chat, inflight *op) {
	sh := &o.shards[uint64(c.id)%numShards]
	sh.mu.Lock()
	c.mu.Lock()
	c.gone = true
	delete(sh.chats, c.id)
	o.forgetFailures(c)
	// A low-priority call still in flight reports itself (executeAsync).
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
	o.unflush(ops)
}

// unflush reports ops as not delivered by Close and fails them.
func (o *Outbox) unflush(ops []*op) {
	o.unflushedMu.Lock()
	for _, op := range ops {
		if op.kind == kindTyping {
			continue // best effort; nothing was lost
		}
		o.unflushed = append(o.unflushed, UnflushedOp{
			Key: op.key, Kind: op.kind.String(), Priority: op.prio, Tag: op.tagOf(), Journal: op.journal,
		})
	}
	o.unflushedMu.Unlock()
	for _, op := range ops {
		op.settleMerged(Result{}, ErrClosed)
		op.pending.resolve(Result{}, ErrClosed)
	}
}

func (op *op) tagOf() string {
	if op.msg != nil {
		return op.msg.tag
	}
	return ""
}

package outbox

import (
	"sync"
	"time"
)

// gate shares the global budget (about 30 calls a second for all chats
// together) among the chat workers. A worker that may call by its chat's
// own limits asks the gate for a slot; when the budget is short, slots go
// to the most urgent request first: high priority (answers, approvals) in
// the order they were queued, then the chat whose visible progress has
// been stale the longest. A first-come reservation would let 200 chats'
// progress edits queue an answer behind them, and would refresh the chats
// in whatever order their workers happened to ask.
type gate struct {
	clock Clock
	win   *window // messages: each slot counts until its call's response, then for the span
	// spareWin bounds best-effort calls (typing, drafts), which Telegram's
	// message limits do not name and which never take a message's slot.
	spareWin *window
	start    func() // starts dispatch on a goroutine the outbox waits for
	// Once the window is two thirds full, progress follows a schedule of one
	// per gap (the window's average rate), so a backlog of progress drains
	// evenly instead of in bursts that leave nothing for the next answer.
	// next is the schedule's next slot; a grant less than a gap late (a
	// timer that fired late on a busy machine) keeps the schedule, so late
	// wake-ups do not lower the rate.
	gap  time.Duration
	next time.Time

	mu      sync.Mutex
	seq     uint64
	waiters []*ticket
	running bool // a dispatch goroutine is granting slots
	kick    chan struct{}
	// sleepUntil is when the dispatcher next looks at the window (zero
	// while it is not sleeping), granted counts the slots handed out and
	// released those given back; tests with a manual clock wait for them.
	sleepUntil time.Time
	granted    int
	released   int // granted slots whose calls ended
}

// ticket is one worker's request for a global slot.
type ticket struct {
	prio    Priority
	since   time.Time // high: when the op was queued; low: since when the chat's progress is stale
	seq     uint64
	granted chan struct{} // closed once the slot is the worker's
	done    bool          // granted or cancelled
	n       int           // how many calls Telegram counts it as (an album: one per item)
	slot    *slot         // the granted slot, released when the call ends
}

// globalKeep is how many global slots low-priority work leaves free, so
// that an answer or an approval in any chat finds one at once.
const globalKeep = 1

// maxArrivalDelay is how long after its send a call without a response is
// assumed to have reached Telegram: its global slot then counts for one
// more span and no longer. Longer would let a few hanging progress edits
// hold answers back until their timeouts (30 s); a call that hangs longer
// and still arrives can at worst meet a 429, which pauses only its chat.
const maxArrivalDelay = 5 * time.Second

// newGate allows n calls per n×every; hold is how long an unreleased slot
// counts at most beyond the span (maxArrivalDelay).
func newGate(clock Clock, n int, every, hold time.Duration, start func()) *gate {
	win := newWindow(n, every)
	if every > 0 { // else no global limit: nothing needs to stay counted
		win.hold = hold
	}
	k := max(1, n/6)
	return &gate{clock: clock, win: win, spareWin: newWindow(k, win.w/time.Duration(k)), start: start,
		kick: make(chan struct{}, 1), gap: every}
}

func keepFor(p Priority) int {
	if p == High {
		return 0
	}
	return globalKeep
}

// better reports whether a goes before b.
func (a *ticket) better(b *ticket) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if !a.since.Equal(b.since) {
		return a.since.Before(b.since)
	}
	return a.seq < b.seq
}

// acquire asks for a slot. The returned ticket's granted channel is
// already closed when a slot was free and nobody waited.
func (g *gate) acquire(prio Priority, since time.Time, n int) *ticket {
	t := &ticket{prio: prio, since: since, n: max(n, 1), granted: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	if len(g.waiters) == 0 && g.waitFor(prio, now, t.n) == 0 {
		t.slot = g.take(prio, now, t.n)
		t.done = true
		close(t.granted)
		return t
	}
	g.seq++
	t.seq = g.seq
	g.waiters = append(g.waiters, t)
	if !g.running {
		g.running = true
		g.start()
	} else {
		select {
		case g.kick <- struct{}{}:
		default:
		}
	}
	return t
}

// cancel withdraws t. It reports false when t was granted meanwhile: the
// slot is then the caller's to use (or to waste).
func (g *gate) cancel(t *ticket) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.done {
		select {
		case <-t.granted:
			return false
		default:
			return true
		}
	}
	t.done = true
	for i, w := range g.waiters {
		if w == t {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			break
		}
	}
	return true
}

// waitFor is how long until a call of priority p may go. Called with g.mu
// held.
func (g *gate) waitFor(p Priority, now time.Time, n int) time.Duration {
	d := g.win.waitN(now, keepFor(p), n)
	if g.win.used() >= g.smoothFrom(p) { // waitN pruned the window
		d = max(d, g.next.Sub(now))
	}
	return d
}

// smoothFrom is how many calls in the window start the even spread for
// work of priority p: progress from two thirds of the window; answers and
// approvals never (they may use every slot at once: ten answers finishing
// together go out together).
func (g *gate) smoothFrom(p Priority) int {
	if p == High {
		return g.win.n + 1
	}
	return max(1, g.win.n*2/3)
}

// take counts a granted call until it is released. Called with g.mu held.
func (g *gate) take(p Priority, now time.Time, n int) *slot {
	below := g.win.used() < g.smoothFrom(p) // a burst keeps no schedule
	s := g.win.take(now, n)
	g.granted++
	if below || g.next.IsZero() || now.Sub(g.next) >= g.gap {
		g.next = now.Add(g.gap)
	} else {
		g.next = g.next.Add(g.gap)
	}
	return s
}

// release ends the call of a granted slot: it counts for the window's span
// from now. A nil slot (no global limit, or already released) is a no-op.
func (g *gate) release(s *slot) {
	if s == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	release(s, g.clock.Now())
	g.released++
	if g.running {
		select {
		case g.kick <- struct{}{}: // a waiter may fit now
		default:
		}
	}
}

// spare allows a best-effort call (typing, a draft) only when nobody waits
// for a slot, the message window is nearly empty (under a sixth full) and
// fewer than a sixth of the window's calls were best-effort within its
// span. Best-effort calls take no message slot: Telegram's limits name
// messages, the fake Bot API counts neither, and typing that cost an answer
// its slot would delay what the user waits for; a burst of new turns
// spends the budget on messages.
func (g *gate) spare() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	if len(g.waiters) > 0 || g.win.count(now) >= g.spareWin.n || g.spareWin.wait(now, 0) > 0 {
		return false
	}
	g.spareWin.add(now)
	return true
}

// grantLocked hands out every slot the window allows, best ticket first,
// and returns how long until the next one may be granted (ok false: no
// one waits).
func (g *gate) grantLocked(now time.Time) (wait time.Duration, ok bool) {
	for len(g.waiters) > 0 {
		bi := 0
		for i, w := range g.waiters {
			if w.better(g.waiters[bi]) {
				bi = i
			}
		}
		best := g.waiters[bi]
		if d := g.waitFor(best.prio, now, best.n); d > 0 {
			return d, true
		}
		best.slot = g.take(best.prio, now, best.n)
		g.waiters = append(g.waiters[:bi], g.waiters[bi+1:]...)
		best.done = true
		close(best.granted)
	}
	return 0, false
}

// dispatch grants slots while anyone waits; stop ends it early (the
// outbox gave up draining, and every waiter is aborting).
func (g *gate) dispatch(stop <-chan struct{}) {
	for {
		g.mu.Lock()
		now := g.clock.Now()
		wait, ok := g.grantLocked(now)
		if !ok {
			g.running, g.sleepUntil = false, time.Time{}
			g.mu.Unlock()
			return
		}
		// Registering the timer under the lock makes reading the clock and
		// starting the timer one step for a test that advances a manual
		// clock under the same lock.
		timer := g.clock.After(wait)
		g.sleepUntil = now.Add(wait)
		g.mu.Unlock()
		select {
		case <-g.kick:
		case <-timer:
		case <-stop:
			g.mu.Lock()
			g.running, g.sleepUntil = false, time.Time{}
			g.mu.Unlock()
			return
		}
	}
}

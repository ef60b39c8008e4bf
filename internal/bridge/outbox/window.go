package outbox

import (
	"slices"
	"time"
)

// window is a sliding-window limit: at most n calls in any span of length
// w. Telegram's group limit ("20 per minute per group") and its global one
// ("about 30 a second") are of this kind, and a token bucket cannot honour
// such a window: with a burst of b and rate r it admits b + r·w calls in a
// span w. A window admits exactly n, and lets low-priority work leave a
// slot free for high-priority work without ever exceeding n. Private chats,
// whose limit is a rate with bursts, use a bucket (bucket.go).
//
// Telegram counts a call when it arrives, which is somewhere between its
// send and its response. A slot taken with take stays counted until the
// call is released and then for w after its response, so a call answered
// late (a loaded machine, a slow network) can never land in a span that
// already holds n. A call without a response (hanging, timed out) counts
// for at most hold beyond w after its send: it is taken to have arrived
// by then, so that hanging calls cannot hold the window shut until their
// timeouts. A slot taken with add counts for w after its send (the
// per-chat windows, which keep a margin instead).
type window struct {
	n     int
	w     time.Duration
	hold  time.Duration // how long after its send an unreleased slot counts at most, beyond w
	slots []*slot       // oldest first by send time
}

// slot is one counted call.
type slot struct {
	at  time.Time // sent
	end time.Time // counted until end+w; zero while a held call is in flight
	n   int       // how many calls Telegram counts it as (an album: one per item)
}

func newWindow(n int, every time.Duration) *window {
	n = max(n, 1)
	return &window{n: n, w: every * time.Duration(n)}
}

// expires is when s stops counting. An unreleased slot counts for hold
// (maxArrivalDelay) beyond w at most, so a call that hangs, or a release
// that never comes, cannot keep the window shut.
func (l *window) expires(s *slot) time.Time {
	if s.end.IsZero() {
		return s.at.Add(l.hold + l.w)
	}
	return s.end.Add(l.w)
}

func (l *window) prune(now time.Time) {
	l.slots = slices.DeleteFunc(l.slots, func(s *slot) bool { return !l.expires(s).After(now) })
}

// wait returns how long until a call may be made that leaves keep of the n
// slots free (0: now). While a held call is in flight, the wait assumes it
// ends now; its release wakes whoever waits.
func (l *window) wait(now time.Time, keep int) time.Duration { return l.waitN(now, keep, 1) }

// waitN is wait for a call Telegram counts as need calls (an album).
func (l *window) waitN(now time.Time, keep, need int) time.Duration {
	l.prune(now)
	allowed := max(l.n-keep, 1)
	need = min(max(need, 1), allowed) // a bigger album goes into an empty window
	used := l.used()
	if used+need <= allowed {
		return 0
	}
	// The call may go once enough of the calls counted leave the window.
	type ending struct {
		at time.Time
		n  int
	}
	ends := make([]ending, len(l.slots))
	for i, s := range l.slots {
		ends[i] = ending{l.expires(s), s.n}
		if s.end.IsZero() {
			ends[i].at = now.Add(l.w)
		}
	}
	slices.SortFunc(ends, func(a, b ending) int { return a.at.Compare(b.at) })
	excess, freed := used+need-allowed, 0
	for _, e := range ends {
		if freed += e.n; freed >= excess {
			return e.at.Sub(now) + time.Millisecond
		}
	}
	return l.w // unreachable: every slot counted is in ends
}

// used is how many calls the slots in the window count as.
func (l *window) used() int {
	n := 0
	for _, s := range l.slots {
		n += s.n
	}
	return n
}

// add counts a call sent at now for w.
func (l *window) add(now time.Time) { l.slots = append(l.slots, &slot{at: now, end: now, n: 1}) }

// take counts a call sent at now, which Telegram counts as n calls, until
// it is released.
func (l *window) take(now time.Time, n int) *slot {
	s := &slot{at: now, n: max(n, 1)}
	l.slots = append(l.slots, s)
	return s
}

// release ends s's call at now: it counts for w more.
func release(s *slot, now time.Time) {
	if s != nil && s.end.IsZero() {
		s.end = now
	}
}

// count is the number of calls in the window at now.
func (l *window) count(now time.Time) int {
	l.prune(now)
	return l.used()
}

// settled is when no call is in the window any more.
func (l *window) settled(now time.Time) time.Time {
	l.prune(now)
	t := now
	for _, s := range l.slots {
		if e := l.expires(s); e.After(t) {
			t = e
		}
	}
	return t
}

// undo forgets the call counted at t, for a call Telegram never counted.
func (l *window) undo(t time.Time) {
	for i := len(l.slots) - 1; i >= 0; i-- {
		if l.slots[i].at.Equal(t) {
			l.slots = slices.Delete(l.slots, i, i+1)
			return
		}
	}
}

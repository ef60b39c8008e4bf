package outbox

import (
	"slices"
	"time"
)

// window is a sliding-window limit: at most n calls in any span of length
// w. Telegram's per-chat limits are of this kind ("about 1 per second with
// short bursts" is enforced here as 3 per ~3 s; "20 per minute per group"),
// and a token bucket cannot both allow a burst and honour such a window:
// with a burst of b and rate r it admits b + r·w calls in a span w. A
// window admits exactly n, and lets low-priority work leave a slot free for
// high-priority work without ever exceeding n.
//
// Telegram counts a call when it arrives, which is somewhere between its
// send and its response. A slot taken with hold stays counted until the
// call is released and then for w after its response, so calls arriving
// late (a loaded machine, a slow network) can never land in a span that
// already holds n, whatever the delay; a slot taken with add counts for w
// after its send (the per-chat windows, which keep a margin instead).
type window struct {
	n     int
	w     time.Duration
	hold  time.Duration // how long an unreleased slot counts at most beyond w
	slots []*slot       // oldest first by send time
}

// slot is one counted call.
type slot struct {
	at  time.Time // sent
	end time.Time // counted until end+w; zero while a held call is in flight
}

func newWindow(n int, every time.Duration) *window {
	n = max(n, 1)
	return &window{n: n, w: every * time.Duration(n)}
}

// expires is when s stops counting. An unreleased slot counts until its
// call's longest timeout has passed, so a release that never comes cannot
// close the window for good.
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
func (l *window) wait(now time.Time, keep int) time.Duration {
	l.prune(now)
	allowed := max(l.n-keep, 1)
	if len(l.slots) < allowed {
		return 0
	}
	// The call may go once enough of the calls counted leave the window.
	ends := make([]time.Time, len(l.slots))
	for i, s := range l.slots {
		ends[i] = l.expires(s)
		if s.end.IsZero() {
			ends[i] = now.Add(l.w)
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	return ends[len(ends)-allowed].Sub(now) + time.Millisecond
}

// add counts a call sent at now for w.
func (l *window) add(now time.Time) { l.slots = append(l.slots, &slot{at: now, end: now}) }

// take counts a call sent at now until it is released.
func (l *window) take(now time.Time) *slot {
	s := &slot{at: now}
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
	return len(l.slots)
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

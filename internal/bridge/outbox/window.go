package outbox

import "time"

// window is a chat's sliding-window limit: at most n calls in any span of
// length w. Telegram's per-chat limits are of this kind ("about 1 per
// second with short bursts" is enforced here as 3 per ~3 s; "20 per minute
// per group"), and a token bucket cannot both allow a burst and honour such
// a window: with a burst of b and rate r it admits b + r·w calls in a span
// w. A window admits exactly n, and lets low-priority work leave a slot
// free for high-priority work without ever exceeding n.
type window struct {
	n     int
	w     time.Duration
	times []time.Time // calls within the last w, oldest first
}

func newWindow(n int, every time.Duration) *window {
	n = max(n, 1)
	return &window{n: n, w: every * time.Duration(n)}
}

func (l *window) prune(now time.Time) {
	i := 0
	for i < len(l.times) && !l.times[i].After(now.Add(-l.w)) {
		i++
	}
	l.times = l.times[i:]
}

// wait returns how long until a call may be made that leaves keep of the n
// slots free (0: now).
func (l *window) wait(now time.Time, keep int) time.Duration {
	l.prune(now)
	allowed := max(l.n-keep, 1)
	if len(l.times) < allowed {
		return 0
	}
	// The call may go once enough of the oldest calls left the window.
	oldest := l.times[len(l.times)-allowed]
	return oldest.Add(l.w).Sub(now) + time.Millisecond
}

func (l *window) add(now time.Time) { l.times = append(l.times, now) }

// settled is when no call is in the window any more.
func (l *window) settled(now time.Time) time.Time {
	l.prune(now)
	if len(l.times) == 0 {
		return now
	}
	return l.times[len(l.times)-1].Add(l.w)
}

// undo forgets the call counted at t, for a call Telegram never counted.
func (l *window) undo(t time.Time) {
	for i := len(l.times) - 1; i >= 0; i-- {
		if l.times[i].Equal(t) {
			l.times = append(l.times[:i], l.times[i+1:]...)
			return
		}
	}
}

package outbox

import "time"

// Clock is the outbox's only source of time, so tests can drive 429 pauses,
// pacing and backoff without real waiting.
type Clock interface {
	Now() time.Time
	// After delivers the time on the returned channel once d has elapsed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// After relies on Go ≥ 1.23 timers being collected once unreferenced, so an
// abandoned select case does not leak.
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

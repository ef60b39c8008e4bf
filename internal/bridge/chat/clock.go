package chat

import "time"

// Clock is the time that users schedule and budget by: /at and /every,
// retries at a limit's reset, budget days and months, /usage periods. Tests
// inject one that can jump ahead (internal/timeshift); the rest of the
// bridge (progress, timeouts) keeps the wall clock.
type Clock interface {
	Now() time.Time
	// After delivers the time once d has passed on this clock.
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// now is the Clock's time.
func (b *Engine) now() time.Time { return b.clock.Now() }

// clockTime converts a wall-clock instant of the recent past to the
// Clock's time, so turns are recorded on the time budgets count by.
func (b *Engine) clockTime(wall time.Time) time.Time {
	if wall.IsZero() {
		return time.Time{}
	}
	return b.now().Add(-time.Since(wall))
}

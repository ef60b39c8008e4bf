package timeshift

import (
	"sync"
	"time"
)

// Clock is a wall clock shifted by an offset that only grows. It is safe for
// concurrent use.
type Clock struct {
	mu      sync.Mutex
	offset  time.Duration
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// New returns a clock that reads start now and runs on from there.
func New(start time.Time) *Clock {
	return &Clock{offset: time.Until(start)}
}

// Now is the shifted time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// After delivers the shifted time once d has passed on this clock.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	at := time.Now().Add(c.offset + d)
	c.waiters = append(c.waiters, waiter{at: at, ch: ch})
	c.mu.Unlock()
	time.AfterFunc(max(d, 0), c.fire)
	return ch
}

// Advance jumps the clock forward by d, firing the timers it passes.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("timeshift: a clock only moves forward")
	}
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	c.fire()
}

// fire delivers every timer whose deadline has passed.
func (c *Clock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Add(c.offset)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if now.Before(w.at) {
			kept = append(kept, w)
			continue
		}
		w.ch <- now // buffered, and each waiter fires once
	}
	c.waiters = kept
}

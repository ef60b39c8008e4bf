package health

import (
	"errors"
	"sync/atomic"
)

// Errors Gate.Ready returns.
var (
	ErrNotStarted = errors.New("no getUpdates call has succeeded yet")
	ErrDraining   = errors.New("draining for a stop: running turns finish, no new work is taken")
)

// Gate is the daemon's readiness: not ready until MarkReady (call it where
// the first getUpdates succeeded: bridge.Options.Ready), and not ready
// again from MarkDraining on (the first SIGTERM). Its zero value is not
// ready. Safe for concurrent use.
type Gate struct {
	ready    atomic.Bool
	draining atomic.Bool
}

// MarkReady records the first successful getUpdates.
func (g *Gate) MarkReady() { g.ready.Store(true) }

// MarkDraining records that the drain started; it cannot be undone.
func (g *Gate) MarkDraining() { g.draining.Store(true) }

// Ready implements Readiness.
func (g *Gate) Ready() error {
	switch {
	case g.draining.Load():
		return ErrDraining
	case !g.ready.Load():
		return ErrNotStarted
	}
	return nil
}

package runner

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Pool bounds what the CLI processes of all sessions cost together: CLI
// start-up burns about one CPU-second, so spawns go through a small
// semaphore, and each live process holds ~100 MB, so the number alive is
// capped, closing the least recently used idle one to make room.
type Pool struct {
	spawns  chan struct{}
	maxLive int

	mu      sync.Mutex
	live    map[*Session]struct{}
	waiting int           // sessions waiting in acquire for a live slot (pool_stats.go)
	changed chan struct{} // closed and replaced whenever live or a state changes
}

// NewPool returns a pool allowing maxSpawns concurrent start-ups and
// maxLive live processes (values < 1 mean 1).
func NewPool(maxLive, maxSpawns int) *Pool {
	return &Pool{
		spawns:  make(chan struct{}, max(maxSpawns, 1)),
		maxLive: max(maxLive, 1),
		live:    make(map[*Session]struct{}),
		changed: make(chan struct{}),
	}
}

// Live returns the number of live processes.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live)
}

// acquire blocks until s may start a process: a spawn slot is free and a
// live slot is free or was made by closing an idle process. The returned
// release frees the spawn slot (the live slot is held until processExited).
func (p *Pool) acquire(ctx context.Context, s *Session) (release func(), err error) {
	waiting := false
	defer func() {
		if waiting {
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
		}
	}()
	for {
		p.mu.Lock()
		if len(p.live) < p.maxLive {
			p.live[s] = struct{}{}
			p.notifyLocked()
			p.mu.Unlock()
			break
		}
		if !waiting {
			waiting = true
			p.waiting++
		}
		victim := p.lruIdleLocked(s)
		wait := p.changed
		p.mu.Unlock()
		if victim != nil {
			victim.log.Info().Msg("closing idle CLI process to stay within max live processes")
			go victim.evict(context.WithoutCancel(ctx))
		}
		select {
		case <-wait:
		case <-time.After(time.Second): // states change without notifying the pool
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for a live process slot: %w", ctx.Err())
		}
	}
	select {
	case p.spawns <- struct{}{}:
		return func() { <-p.spawns }, nil
	case <-ctx.Done():
		p.processExited(s)
		return nil, fmt.Errorf("wait for a spawn slot: %w", ctx.Err())
	}
}

func (p *Pool) lruIdleLocked(except *Session) *Session {
	var victim *Session
	var oldest time.Time
	for s := range p.live {
		if s == except {
			continue
		}
		st, last := s.idleSince()
		if st != StateIdle {
			continue
		}
		if victim == nil || last.Before(oldest) {
			victim, oldest = s, last
		}
	}
	return victim
}

func (p *Pool) processExited(s *Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, s)
	p.notifyLocked()
}

func (p *Pool) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

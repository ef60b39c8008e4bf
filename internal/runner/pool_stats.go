package runner

// PoolStats is a snapshot of what holds the pool's live-process slots, for
// telling a waiting user why they wait.
type PoolStats struct {
	Live, Max int
	// Working counts processes starting or running a turn; Approval those
	// whose turn waits on a human decision; Idle those that could be closed
	// to make room (the pool does so by itself).
	Working, Approval, Idle int
	// Waiting counts sessions waiting for a live slot (every slot taken):
	// one per chat whose message cannot reach Claude yet.
	Waiting int
}

// Full reports whether every live slot is taken by a process that cannot be
// closed to make room: a start now has to wait.
func (st PoolStats) Full() bool { return st.Live >= st.Max && st.Idle == 0 }

// Stats counts the live processes by what they are doing.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PoolStats{Live: len(p.live), Max: p.maxLive, Waiting: p.waiting}
	for s := range p.live {
		switch s.State() {
		case StateApproval:
			st.Approval++
		case StateIdle:
			st.Idle++
		default:
			st.Working++
		}
	}
	return st
}

// Holds reports whether s holds a live slot (it has, or is starting, a
// process); a session that wants one and does not hold one is waiting.
func (p *Pool) Holds(s *Session) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.live[s]
	return ok
}

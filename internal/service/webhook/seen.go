package webhook

import (
	"context"
	"sync"
	"time"
)

// Seen remembers the deliveries a trigger accepted, so that a replay runs
// once. Keys are opaque strings made by the handler (one per trigger and
// delivery id, one per trigger and body hash). A store decides its own
// window and bound.
type Seen interface {
	// Claim records key as seen at now, unless it was already seen within
	// the window: then it reports false (a replay). An error wrapping
	// ErrUnavailable (the store cannot write now) is answered 503, so the
	// sender tries again; any other is 500.
	Claim(ctx context.Context, key string, now time.Time) (fresh bool, err error)
	// Release forgets key: its delivery was not accepted after all, so the
	// sender's retry must run.
	Release(ctx context.Context, key string) error
}

// Defaults of NewMemorySeen as the handler uses it.
const (
	// DefaultReplayWindow covers GitHub's manual redelivery of recent
	// deliveries and a captured delivery sent again the same day.
	DefaultReplayWindow = 24 * time.Hour
	// DefaultSeenEntries bounds the memory (about 200 bytes an entry):
	// two entries per delivery, so 25,000 deliveries a day are all
	// remembered for the whole window.
	DefaultSeenEntries = 50_000
)

// MemorySeen is a Seen in memory: entries older than the window are
// forgotten, and past max entries the oldest go first. It forgets
// everything on a restart.
type MemorySeen struct {
	window time.Duration
	max    int

	mu    sync.Mutex
	at    map[string]time.Time
	order []seenEntry // claims in time order, oldest first
}

type seenEntry struct {
	key string
	at  time.Time
}

// NewMemorySeen returns a store that remembers a key for window, at most
// max keys at once.
func NewMemorySeen(window time.Duration, max int) *MemorySeen {
	return &MemorySeen{window: window, max: max, at: map[string]time.Time{}}
}

// Claim implements Seen.
func (s *MemorySeen) Claim(_ context.Context, key string, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if at, ok := s.at[key]; ok && now.Sub(at) < s.window {
		return false, nil
	}
	s.at[key] = now
	s.order = append(s.order, seenEntry{key: key, at: now})
	// Released keys leave their entry in order; both bounds keep memory
	// in check whatever the mix.
	for len(s.order) > 0 && (len(s.at) > s.max || len(s.order) > 2*s.max) {
		s.drop()
	}
	return true, nil
}

// Release implements Seen.
func (s *MemorySeen) Release(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.at, key)
	return nil
}

// Len is how many keys are remembered.
func (s *MemorySeen) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}

// expire forgets the entries older than the window.
func (s *MemorySeen) expire(now time.Time) {
	for len(s.order) > 0 && now.Sub(s.order[0].at) >= s.window {
		s.drop()
	}
	if cap(s.order) > 2*s.max && len(s.order) < s.max/2 { // let a drained backing array go
		s.order = append([]seenEntry(nil), s.order...)
	}
}

// drop forgets the oldest entry, unless its key was claimed again since
// (then a later entry stands for it).
func (s *MemorySeen) drop() {
	e := s.order[0]
	s.order = s.order[1:]
	if at, ok := s.at[e.key]; ok && at.Equal(e.at) {
		delete(s.at, e.key)
	}
}

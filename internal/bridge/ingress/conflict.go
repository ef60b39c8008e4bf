package ingress

import (
	"sync"
	"time"
)

// 409 Conflict means another program polls this bot token (or a webhook is
// set). It is often brief: the old instance of a restart or a deploy still
// finishing its last long poll. go-telegram/bot retries with a back-off
// (100 ms doubling to 5 s), so the daemon keeps going and only gives up,
// with exit status 12, once conflicts have gone on for longer than
// [telegram] conflict_grace. Two pollers that keep running interrupt each
// other's long polls, so conflicts keep coming even though some polls
// succeed: a streak ends only after a quiet spell.

// ConflictStreak tracks an ongoing run of 409 Conflicts. It is safe for
// concurrent use.
type ConflictStreak struct {
	mu    sync.Mutex
	first time.Time // zero: no streak
	last  time.Time
	count int
}

// Observe records a 409 at now. A conflict more than quiet after the
// previous one starts a new streak. It returns how long the streak has
// lasted and how many conflicts it counts.
func (s *ConflictStreak) Observe(now time.Time, quiet time.Duration) (lasted time.Duration, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() || now.Sub(s.last) > quiet {
		s.first, s.count = now, 0
	}
	s.last = now
	s.count++
	return now.Sub(s.first), s.count
}

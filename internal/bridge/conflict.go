package bridge

import (
	"fmt"
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
// succeed: a streak ends only after a quiet spell of two full long polls.

// conflictStreak tracks an ongoing run of 409 Conflicts.
type conflictStreak struct {
	mu    sync.Mutex
	first time.Time // zero: no streak
	last  time.Time
	count int
}

// onConflict records a 409; once the streak has outlasted the grace
// period the daemon stops with ErrFatalTelegram.
func (b *Bridge) onConflict(err error, now time.Time) {
	cfg := b.Config()
	grace := cfg.Telegram.ConflictGrace.Std()
	quiet := 2*cfg.Telegram.PollTimeout.Std() + 10*time.Second
	s := &b.conflict
	s.mu.Lock()
	if s.first.IsZero() || now.Sub(s.last) > quiet {
		s.first, s.count = now, 0
	}
	s.last = now
	s.count++
	first, count := s.first, s.count
	s.mu.Unlock()

	lasted := now.Sub(first)
	switch {
	case lasted > grace:
		b.log.Error().Err(err).Dur("lasted", lasted).Int("conflicts", count).
			Msg("another program keeps polling this bot token (409 Conflict) for longer than telegram.conflict_grace; stopping")
		b.sendFatal(fmt.Errorf("%w: another poller or a webhook has used this bot token for %s: %v",
			ErrFatalTelegram, lasted.Round(time.Second), err))
	case count == 1:
		b.log.Warn().Err(err).Dur("conflict_grace", grace).
			Msg("another program is polling this bot token (409 Conflict); retrying, and giving up if it lasts longer than telegram.conflict_grace")
	default:
		b.log.Debug().Err(err).Int("conflicts", count).Msg("409 Conflict again; retrying")
	}
}

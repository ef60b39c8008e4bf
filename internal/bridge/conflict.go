package bridge

import (
	"fmt"
	"time"
)

// A 409 streak (ingress.ConflictStreak) ends after a quiet spell of two
// full long polls; one that outlasts [telegram] conflict_grace is fatal.

// onConflict records a 409; once the streak has outlasted the grace
// period the daemon stops with ErrFatalTelegram.
func (b *Bridge) onConflict(err error, now time.Time) {
	cfg := b.Config()
	grace := cfg.Telegram.ConflictGrace.Std()
	quiet := 2*cfg.Telegram.PollTimeout.Std() + 10*time.Second
	lasted, count := b.conflict.Observe(now, quiet)
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

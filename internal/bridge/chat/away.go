package chat

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// Away from the keyboard (issue 13): what Claude costs (/usage) and may
// cost (budgets, budget.go), prompts a subscription limit rejected sent
// again when it resets (limitretry.go), and prompts sent on a schedule
// (scheduler.go, schedules.go). This file holds their shared state and the
// hooks the chat's turn code calls.

// bridgeAway is the bridge's part.
type bridgeAway struct {
	clock Clock
	// wake pokes the scheduler when a schedule or a retry was added or
	// changed, so it recomputes when to wake up.
	wake chan struct{}
	done chan struct{} // closed when the scheduler stopped
	// schedProjects maps a [[schedules]] entry's ConfigKey to its project,
	// for the entries that name one (schedules_projects.go). The
	// scheduler sets it at start; chats read it when a run fires.
	schedProjects atomic.Pointer[map[string]string]
}

// chatAway is a chat's part. Only the actor touches it.
type chatAway struct {
	// rejection is a rate_limit_event that rejected the current turn.
	rejection *runner.RateLimit
	// waiting are scheduled runs that came while the chat was busy.
	waiting []state.Schedule
	polling bool
	// handedOver are the firing retries whose prompt is on its way to the
	// CLI (pending_runs.go): ✖️ Drop can no longer stop them.
	handedOver map[string]bool
}

func newBridgeAway(clock Clock) bridgeAway {
	if clock == nil {
		clock = systemClock{}
	}
	return bridgeAway{clock: clock, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// pokeScheduler makes the scheduler look at its tables again.
func (b *Engine) pokeScheduler() {
	select {
	case b.away.wake <- struct{}{}:
	default:
	}
}

// clockTime converts a wall-clock instant of the recent past to the
// Clock's time, so turns are recorded on the time budgets count by.
func (b *Engine) clockTime(wall time.Time) time.Time {
	if wall.IsZero() {
		return time.Time{}
	}
	return b.now().Add(-time.Since(wall))
}

// Buttons of retries after a subscription limit and of schedules: their
// tokens are state-store keys, valid across restarts.
const (
	btnRetryLimit     buttonKind = 'L' // ⏰ Retry at the reset
	btnDropRetry      buttonKind = 'Z' // ✖️ Drop the retry
	btnDeleteSchedule buttonKind = 's' // 🗑 Delete a schedule; the token is its id
)

// resolveAway finds the retry or the schedule a press is for. Their tokens
// live in the state store, so the buttons work across restarts.
func (b *Engine) resolveAway(kind buttonKind) func(context.Context, *models.CallbackQuery, string) (state.ChatKey, func(*Chat), string) {
	return func(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*Chat), string) {
		if cq.Message.Message == nil {
			return state.ChatKey{}, nil, expiredText
		}
		msgID := cq.Message.Message.ID
		switch kind {
		case btnRetryLimit, btnDropRetry:
			r, err := b.store.GetRetry(ctx, token)
			if err != nil {
				return state.ChatKey{}, nil, expiredText
			}
			return r.Key, func(c *Chat) { c.onRetryPress(r.Token, msgID, kind, cq.From) }, ""
		}
		id, err := strconv.ParseInt(token, 10, 64)
		if err != nil {
			return state.ChatKey{}, nil, "This button is not recognised."
		}
		var key state.ChatKey
		sc, err := b.store.GetSchedule(ctx, id)
		switch {
		case errors.Is(err, state.ErrNotFound):
			// Deleted already: the press refreshes the list it was
			// made on, which DeleteSchedule keeps to its own chat.
			key, _ = pressKey(cq)
		case err != nil:
			return state.ChatKey{}, nil, expiredText
		default:
			key = sc.Key
		}
		return key, func(c *Chat) { c.deleteSchedule(id, msgID, cq.From) }, ""
	}
}

// promptLabel is a prompt's first words, for notices.
func promptLabel(text string) string {
	return labelOf(runner.UserInput{Text: strings.TrimSpace(text)})
}

package schedules

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	log   *zerolog.Logger
	away  chat.Slot[chatAway]
	// queue holds the due runs waiting for their chat (startScheduled).
	queue chat.WaitQueue[state.Schedule]
	// wake pokes the scheduler when a schedule or a retry was added or
	// changed, so it recomputes when to wake up.
	wake chan struct{}
	// schedProjects maps a [[schedules]] entry's ConfigKey to its project,
	// for the entries that name one (projects.go). The scheduler sets it
	// at start; chats read it when a run fires.
	schedProjects atomic.Pointer[map[string]string]
}

// New builds the module.
func New(h *chat.Host) *Module {
	return &Module{host: h, store: h.Store(), log: h.Logger(), wake: make(chan struct{}, 1)}
}

// store is what the module reads and writes of the state database.
type store interface {
	AddSchedule(ctx context.Context, sc state.Schedule, max int) (int64, error)
	GetSchedule(ctx context.Context, id int64) (state.Schedule, error)
	DeleteSchedule(ctx context.Context, key state.ChatKey, id int64) (bool, error)
	ChatSchedules(ctx context.Context, key state.ChatKey) ([]state.Schedule, error)
	DueSchedules(ctx context.Context, now time.Time) ([]state.Schedule, error)
	AdvanceSchedule(ctx context.Context, id int64, from, next, pending time.Time) (bool, error)
	NextScheduleRun(ctx context.Context) (time.Time, bool, error)
	SyncConfigSchedules(ctx context.Context, entries []state.Schedule) error
	PendingScheduleRuns(ctx context.Context) ([]state.Schedule, error)
	FinishScheduleRun(ctx context.Context, id int64, run time.Time) error
	PutRetry(ctx context.Context, r state.Retry) error
	GetRetry(ctx context.Context, token string) (state.Retry, error)
	DecideRetry(ctx context.Context, token string, to state.RetryState, by state.UserID, from ...state.RetryState) (bool, error)
	SetRetryMessage(ctx context.Context, token string, id state.MessageID) error
	DueRetries(ctx context.Context, now time.Time) ([]state.Retry, error)
	NextRetry(ctx context.Context) (time.Time, bool, error)
	FiringRetries(ctx context.Context) ([]state.Retry, error)
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
}

// chatAway is a chat's state. Only the actor touches it.
type chatAway struct {
	// rejection is a rate_limit_event that rejected the current turn.
	rejection *runner.RateLimit
	// handedOver are the firing retries whose prompt is on its way to the
	// CLI (pending.go): ✖️ Drop can no longer stop them.
	handedOver map[string]bool
	// notices are the retries' notices sent by this run, by token, so an
	// edit need not wait for the id Telegram gives them (limitretry.go).
	notices map[string]*outbox.Message
}

// pokeScheduler makes the scheduler look at its tables again.
func (m *Module) pokeScheduler() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Buttons of retries after a subscription limit and of schedules: their
// tokens are state-store keys, valid across restarts.
const (
	btnRetryLimit     chat.ButtonKind = 'L' // ⏰ Retry at the reset
	btnDropRetry      chat.ButtonKind = 'Z' // ✖️ Drop the retry
	btnDeleteSchedule chat.ButtonKind = 's' // 🗑 Delete a schedule; the token is its id
)

// resolveAway finds the retry or the schedule a press is for. Their tokens
// live in the state store, so the buttons work across restarts.
func (m *Module) resolveAway(kind chat.ButtonKind) func(context.Context, *models.CallbackQuery, string) (state.ChatKey, func(*chat.Chat), string) {
	return func(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*chat.Chat), string) {
		if cq.Message.Message == nil {
			return state.ChatKey{}, nil, chat.ExpiredText
		}
		msgID := cq.Message.Message.ID
		switch kind {
		case btnRetryLimit, btnDropRetry:
			r, err := m.store.GetRetry(ctx, token)
			if err != nil {
				return state.ChatKey{}, nil, chat.ExpiredText
			}
			return r.Key, func(c *chat.Chat) { m.onRetryPress(c, r.Token, msgID, kind, cq.From) }, ""
		}
		id, err := strconv.ParseInt(token, 10, 64)
		if err != nil {
			return state.ChatKey{}, nil, "This button is not recognised."
		}
		var key state.ChatKey
		sc, err := m.store.GetSchedule(ctx, id)
		switch {
		case errors.Is(err, state.ErrNotFound):
			// Deleted already: the press refreshes the list it was
			// made on, which DeleteSchedule keeps to its own chat.
			key, _ = chat.PressKey(cq)
		case err != nil:
			return state.ChatKey{}, nil, chat.ExpiredText
		default:
			key = sc.Key
		}
		return key, func(c *chat.Chat) { m.deleteSchedule(c, id, msgID, cq.From) }, ""
	}
}

// promptLabel is a prompt's first words, for notices.
func promptLabel(text string) string {
	return chat.LabelOf(runner.UserInput{Text: strings.TrimSpace(text)})
}

// sampleRetry keeps a prompt a limit rejected, whose ⏰ Retry and ✖️ Drop
// work (chat.StoredButton.Sample).
func (m *Module) sampleRetry(ctx context.Context, key state.ChatKey) (string, error) {
	now := time.Now()
	r := state.Retry{Token: chat.NewToken(), Key: key, Input: []byte(`{"Text":"retried prompt"}`), Label: "retried prompt",
		ResetsAt: now.Add(time.Hour), State: state.RetryAsked, CreatedAt: now}
	return r.Token, m.store.PutRetry(ctx, r)
}

// sampleSchedule adds a schedule whose 🗑 Delete works.
func (m *Module) sampleSchedule(ctx context.Context, key state.ChatKey) (string, error) {
	now := time.Now()
	id, err := m.store.AddSchedule(ctx, state.Schedule{Key: key, Prompt: "scheduled prompt", NextRun: now.Add(time.Hour), CreatedAt: now}, 100)
	return strconv.FormatInt(id, 10), err
}

package wakeups

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// store is the part of the state store the module uses.
type store interface {
	PutLostWakeup(ctx context.Context, w state.LostWakeup) error
	GetLostWakeup(ctx context.Context, token string) (state.LostWakeup, error)
	PendingWakeups(ctx context.Context) ([]state.LostWakeup, error)
	OfferLostWakeup(ctx context.Context, token, why string) (bool, error)
	ForgetPendingWakeup(ctx context.Context, token string) error
	RearmLostWakeup(ctx context.Context, token string, by state.UserID) (bool, error)
}

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	state chat.Slot[chatWakes]
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, store: h.Store()} }

// btnRearm is ▶️ Re-arm under a lost wake-up's notice; the token is the
// lost_wakeups row.
const btnRearm chat.ButtonKind = 'W'

// maxOffered bounds the wake-ups one notice offers again (one button each).
const maxOffered = 5

// Register adds the heading of a turn a wake-up started, the record of
// pending wake-ups, the notice of lost ones with their ▶️ Re-arm button,
// and the wake-ups' lines in /status.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[chatWakes](r)
	r.OnEvent(m.follow)
	r.AnswerHeading(m.takeHeading)
	r.OnWorkStopped(m.stopped)
	r.OnStatus(func(c *chat.Chat, info *render.StatusInfo) {
		if s := c.Session(); s != nil {
			for _, w := range s.Pending().Wakeups {
				info.Wakeups = append(info.Wakeups, m.describe(c, w, true))
			}
		}
	})
	r.StoredButton(btnRearm, chat.StoredButton{Ack: "Re-arming…", WaitFirst: true,
		Wait: "untether is restarting; press ▶️ Re-arm again once it is back.", Resolve: m.resolve, Sample: m.sample})
}

// describe is one wake-up in the user's words: when it fires (or fired)
// and what for. pending: it is still to come.
func (m *Module) describe(c *chat.Chat, w runner.Wakeup, pending bool) string {
	now := m.host.Now()
	loc := c.Config().Telegram.Location()
	at := func() string {
		if pending {
			return render.FormatUntil(w.At.In(loc), now.In(loc))
		}
		return render.FormatWhen(w.At.In(loc), now.In(loc))
	}
	what := firstLine(w.Reason, w.Prompt)
	var s string
	switch {
	case w.Tool == "ScheduleWakeup":
		s = "a wake-up"
		if !w.At.IsZero() {
			s += " " + at()
		}
	case w.Recurring:
		s = "a recurring job" + when(w)
		if !w.At.IsZero() && pending {
			s += ", next " + at()
		}
	default:
		s = "a job"
		if !w.At.IsZero() {
			s += " " + at()
		}
	}
	if what != "" {
		s += ": " + render.Truncate(what, 100)
	}
	return s
}

// when is a recurring job's schedule in parentheses, as the CLI words it
// ("" when neither its wording nor its expression is known).
func when(w runner.Wakeup) string {
	if s := firstLine(w.Schedule, w.Cron); s != "" {
		return " (" + s + ")"
	}
	return ""
}

// firstLine is the first non-empty of ss, on one line.
func firstLine(ss ...string) string {
	for _, s := range ss {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			return s
		}
	}
	return ""
}

// sample keeps a lost wake-up whose ▶️ Re-arm works
// (chat.StoredButton.Sample).
func (m *Module) sample(ctx context.Context, key state.ChatKey) (string, error) {
	raw, err := json.Marshal(runner.Wakeup{Tool: "ScheduleWakeup", At: time.Now().Add(time.Hour), Reason: "check", Prompt: "check"})
	if err != nil {
		return "", err
	}
	tok := chat.NewToken()
	return tok, m.store.PutLostWakeup(ctx, state.LostWakeup{Token: tok, Key: key, SessionID: string(runner.NewSessionID()),
		Wakeup: raw, Why: "a test", State: state.WakeupOffered})
}

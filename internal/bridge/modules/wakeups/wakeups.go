package wakeups

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// store is the part of the state store the module uses.
type store interface {
	PutLostWakeup(ctx context.Context, w state.LostWakeup) error
	GetLostWakeup(ctx context.Context, token string) (state.LostWakeup, error)
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

// Register adds the heading of a turn a wake-up started, the notice of
// lost wake-ups with their ▶️ Re-arm button, and the wake-ups' lines in
// /status.
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

// lost are the wake-ups of w that ended with the process: a durable job
// is on disk and comes back with any CLI in its directory.
func lost(w chat.StoppedWork) []runner.Wakeup {
	var out []runner.Wakeup
	for _, wk := range w.Work.Wakeups {
		if !wk.Durable {
			out = append(out, wk)
		}
	}
	return out
}

// stopped tells the chat which wake-ups a closed CLI lost, each with its
// ▶️ Re-arm button.
func (m *Module) stopped(c *chat.Chat, w chat.StoppedWork) {
	wakes := lost(w)
	if len(wakes) == 0 {
		return
	}
	var (
		lines []string
		kb    render.Keyboard
	)
	for i, wk := range wakes {
		line := "⏰ " + render.EscapeHTML(m.describe(c, wk, false)) + " — " + fate(wk)
		if i < maxOffered && w.Session != "" {
			tok, err := m.offer(c, w, wk)
			if err != nil {
				c.Log().Error().Err(err).Msg("keep a lost wake-up for ▶️ Re-arm")
			} else {
				label := "▶️ Re-arm"
				if len(wakes) > 1 {
					label = fmt.Sprintf("▶️ Re-arm %d", i+1)
					line = fmt.Sprintf("%d. %s", i+1, line)
				}
				kb.Rows = append(kb.Rows, []render.Button{{Text: label, CallbackData: chat.CallbackData(btnRearm, tok)}})
			}
		}
		lines = append(lines, line)
	}
	what := "the wake-up Claude had set"
	if len(wakes) > 1 {
		what = "the wake-ups Claude had set"
	}
	html := "Claude's process was closed (" + render.EscapeHTML(w.Why) + "), and " + what + " stopped with it:\n" +
		strings.Join(lines, "\n")
	if len(kb.Rows) > 0 {
		html += "\n\n▶️ Re-arm asks Claude, in the session it was set in, to set it again."
	}
	c.SendMessage(outbox.High, outbox.Content{Text: html, Keyboard: kb}, outbox.SendOptions{Tag: "lost-wakeup"})
}

// fate says what becomes of a lost wake-up (runner/background.go): a
// ScheduleWakeup is gone for good; a session's CronCreate job comes back
// with the session, but fires only while a CLI runs it.
func fate(w runner.Wakeup) string {
	if w.Tool == "ScheduleWakeup" {
		return "it will not fire"
	}
	return "it fires again only while Claude's process runs this session again"
}

// offer keeps wk for its ▶️ Re-arm button and returns the token.
func (m *Module) offer(c *chat.Chat, w chat.StoppedWork, wk runner.Wakeup) (string, error) {
	raw, err := json.Marshal(wk)
	if err != nil {
		return "", fmt.Errorf("encode a lost wake-up: %w", err)
	}
	tok := chat.NewToken()
	err = m.store.PutLostWakeup(c.Ctx(), state.LostWakeup{Token: tok, Key: c.Key(), SessionID: w.Session,
		Project: w.Place.Project, Branch: w.Place.Branch, Wakeup: raw, Why: w.Why, CreatedAt: m.host.Now()})
	return tok, err
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
		s = "a recurring job (" + firstLine(w.Schedule, w.Cron) + ")"
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
		Wakeup: raw, Why: "a test"})
}

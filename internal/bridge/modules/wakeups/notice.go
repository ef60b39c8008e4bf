package wakeups

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Lost wake-ups are told in one notice per close, one line each with what
// becomes of it, and a ▶️ Re-arm button each (the first maxOffered).

// killedWhy is what closed the CLIs of a daemon that was killed: their
// wake-ups are told at the next start, from the pending rows.
const killedWhy = "untether was killed or crashed"

// lostWakeup is a wake-up to tell lost, with its row's token ("" when it
// could not be kept: it gets no button).
type lostWakeup struct {
	w   runner.Wakeup
	tok string
}

// stopped tells the chat which wake-ups a closed CLI lost (OnWorkStopped).
// The ones already kept as pending are offered from their rows.
func (m *Module) stopped(c *chat.Chat, w chat.StoppedWork) {
	kept := m.state.Get(c).takeKept(w.Session)
	var lost []lostWakeup
	for _, wk := range w.Work.Wakeups {
		if wk.Durable { // on disk: back with any CLI in its directory
			continue
		}
		tok, err := m.offer(c, w, wk, kept[identity(wk)])
		if err != nil {
			c.Log().Error().Err(err).Msg("keep a lost wake-up for ▶️ Re-arm")
		}
		delete(kept, identity(wk))
		lost = append(lost, lostWakeup{w: wk, tok: tok})
	}
	m.forget(c.Ctx(), c, kept) // no longer pending, and not lost (they fired meanwhile)
	m.notice(c, w.Why, lost)
}

// offer keeps wk for its ▶️ Re-arm button and returns the token: its
// pending row when it has one, else a new row.
func (m *Module) offer(c *chat.Chat, w chat.StoppedWork, wk runner.Wakeup, pending string) (string, error) {
	if pending != "" {
		if ok, err := m.store.OfferLostWakeup(c.Ctx(), pending, w.Why); err != nil || ok {
			return pending, err
		}
	}
	if w.Session == "" {
		return "", nil
	}
	raw, err := json.Marshal(wk)
	if err != nil {
		return "", fmt.Errorf("encode a lost wake-up: %w", err)
	}
	tok := chat.NewToken()
	err = m.store.PutLostWakeup(c.Ctx(), state.LostWakeup{Token: tok, Key: c.Key(), SessionID: w.Session,
		Project: w.Place.Project, Branch: w.Place.Branch, Wakeup: raw, Why: w.Why, State: state.WakeupOffered, CreatedAt: m.host.Now()})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// notice sends the chat the lost wake-ups, with their buttons.
func (m *Module) notice(c *chat.Chat, why string, lost []lostWakeup) {
	if len(lost) == 0 {
		return
	}
	var (
		lines []string
		kb    render.Keyboard
	)
	for i, l := range lost {
		line := "⏰ " + render.EscapeHTML(m.describe(c, l.w, false)) + " — " + fate(l.w)
		if l.tok != "" && len(kb.Rows) < maxOffered {
			label := "▶️ Re-arm"
			if len(lost) > 1 {
				label = fmt.Sprintf("▶️ Re-arm %d", i+1)
				line = fmt.Sprintf("%d. %s", i+1, line)
			}
			kb.Rows = append(kb.Rows, []render.Button{{Text: label, CallbackData: chat.CallbackData(btnRearm, l.tok)}})
		}
		lines = append(lines, line)
	}
	what := "the wake-up Claude had set"
	if len(lost) > 1 {
		what = "the wake-ups Claude had set"
	}
	html := "Claude's process was closed (" + render.EscapeHTML(why) + "), and " + what + " stopped with it:\n" +
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

// Start tells the chats whose CLIs a killed daemon took with it which
// wake-ups they lost: the rows still pending from the previous run
// (chat.Starter). It returns once they are handed to their chats.
func (m *Module) Start(ctx context.Context) {
	rows, err := m.store.PendingWakeups(ctx)
	if err != nil {
		m.host.Logger().Error().Err(err).Msg("read the wake-ups the previous run left pending")
		return
	}
	byChat := map[state.ChatKey][]state.LostWakeup{}
	var keys []state.ChatKey
	for _, r := range rows {
		if byChat[r.Key] == nil {
			keys = append(keys, r.Key)
		}
		byChat[r.Key] = append(byChat[r.Key], r)
	}
	for _, key := range keys {
		c := m.host.Chat(key)
		if c == nil {
			return // draining already
		}
		rows := byChat[key]
		c.Post(func() { m.killed(c, rows) })
	}
}

// killed offers the wake-ups a killed daemon's CLI took with it.
func (m *Module) killed(c *chat.Chat, rows []state.LostWakeup) {
	var lost []lostWakeup
	for _, r := range rows {
		var w runner.Wakeup
		if err := json.Unmarshal(r.Wakeup, &w); err != nil {
			c.Log().Error().Err(err).Msg("read a wake-up the previous run left pending")
			continue
		}
		ok, err := m.store.OfferLostWakeup(c.Ctx(), r.Token, killedWhy)
		switch {
		case err != nil:
			c.Log().Error().Err(err).Msg("offer a wake-up the previous run lost")
			lost = append(lost, lostWakeup{w: w})
		case ok:
			lost = append(lost, lostWakeup{w: w, tok: r.Token})
		}
	}
	m.notice(c, killedWhy, lost)
}

package wakeups

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// minDelay is the shortest delay ScheduleWakeup takes (it clamps to
// [60, 3600] seconds).
const minDelay = 60 * time.Second

// alreadyText answers a press on a wake-up re-armed before.
const alreadyText = "This wake-up was re-armed already."

// resolve finds the lost wake-up a ▶️ Re-arm press is for.
func (m *Module) resolve(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*chat.Chat), string) {
	lw, err := m.store.GetLostWakeup(ctx, token)
	switch {
	case err != nil:
		return state.ChatKey{}, nil, chat.ExpiredText
	case lw.State == state.WakeupRearmed:
		return state.ChatKey{}, nil, alreadyText
	case lw.State != state.WakeupOffered: // pending: no button shows it yet
		return state.ChatKey{}, nil, chat.ExpiredText
	}
	msgID := 0
	if cq.Message.Message != nil {
		msgID = cq.Message.Message.ID
	}
	return lw.Key, func(c *chat.Chat) { m.rearm(c, lw, msgID, cq.From) }, ""
}

// rearm asks Claude, in the session the wake-up was set in, to set it
// again. A chat that works in another session now (/new, a switch) is
// moved back to that one first; a busy chat is told to finish first, and
// the button keeps working.
func (m *Module) rearm(c *chat.Chat, lw state.LostWakeup, msgID int, from models.User) {
	var w runner.Wakeup
	if err := json.Unmarshal(lw.Wakeup, &w); err != nil {
		c.Log().Error().Err(err).Msg("read a lost wake-up")
		c.Reply("⚠️ This wake-up cannot be re-armed: what was kept of it cannot be read.", msgID)
		return
	}
	respond := func(html string) { c.Reply(html, msgID) }
	if lw.SessionID != c.Record().SessionID {
		if c.Busy() {
			_, cur := c.Place(c.Config())
			respond("⏳ Claude is working in <b>" + render.EscapeHTML(cur.String()) +
				"</b> now: let it finish or /cancel first, then press ▶️ Re-arm again.")
			return
		}
		if !c.ResumeSession(lw.SessionID, respond) {
			return
		}
	}
	ok, err := m.store.RearmLostWakeup(c.Ctx(), lw.Token, state.UserID(from.ID))
	switch {
	case err != nil:
		c.Log().Error().Err(err).Msg("claim a lost wake-up")
		respond("⚠️ Could not re-arm the wake-up: " + render.EscapeHTML(m.host.Redact(err).Error()))
		return
	case !ok:
		respond(alreadyText)
		return
	}
	respond("▶️ " + render.EscapeHTML(chat.UserName(from)) + " asked Claude to set " +
		render.EscapeHTML(m.describe(c, w, false)) + " again, in the session it was set in.")
	c.Send(runner.UserInput{Text: rearmPrompt(w, lw.Why, m.host.Now())}, msgID, state.UserID(from.ID))
}

// rearmPrompt asks Claude to set w again: the same call, the same time
// when it is still ahead.
func rearmPrompt(w runner.Wakeup, why string, now time.Time) string {
	lead := "[untether: ▶️ Re-arm] Your Claude Code process for this session was closed (" + why + "), and "
	if w.Tool == "ScheduleWakeup" {
		delay := max(w.At.Sub(now), minDelay)
		due := "it was due at " + w.At.UTC().Format(time.RFC3339)
		if !w.At.After(now) {
			due += ", which has passed, so set it for the soonest time allowed"
		}
		return lead + "the wake-up you had set with ScheduleWakeup was lost with it (" + due + "). " +
			"The user asks you to set it again now: call ScheduleWakeup with delaySeconds " +
			strconv.Itoa(int(math.Ceil(delay.Seconds()))) + ", reason " + strconv.Quote(w.Reason) +
			" and this prompt, verbatim: " + strconv.Quote(w.Prompt) + ". Then end the turn."
	}
	return lead + fmt.Sprintf("your CronCreate job %s (cron %q, recurring %t, prompt %q) stopped with it. ",
		w.ID, w.Cron, w.Recurring, w.Prompt) +
		"Resuming this session may have brought the job back: call CronList first. If it is not listed, the user asks you " +
		"to create it again now: call CronCreate with the same cron, recurring and prompt, verbatim. Then end the turn."
}

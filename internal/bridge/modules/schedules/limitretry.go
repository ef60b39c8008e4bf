package schedules

import (
	"context"
	"encoding/json"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A prompt a subscription limit rejected (rate_limit_event "rejected" with
// a reset time; OAuth logins only) is answered with when the limit resets
// and, per [claude] retry_after_limit, ⏰ Retry / ✖️ Drop buttons ("ask")
// or the promise to send it again by itself ("auto"). The prompt waits in
// the state store, so a restart keeps it; the scheduler (scheduler.go)
// hands it back to the chat at the reset, through the same path as a
// message the user typed (budgets and approvals apply), in the project
// and branch it was rejected in (limitretry_projects.go).

// answerLimit answers a turn a subscription limit rejected, instead of the
// generic error answer. It reports false when the turn was not such a one,
// or its prompt cannot be told apart (then the error answer explains).
func (m *Module) answerLimit(c *chat.Chat, tc runner.TurnCompleted, replyTo int) bool {
	rej := m.away.Get(c).rejection
	m.away.Get(c).rejection = nil
	if tc.OK || rej == nil {
		return false
	}
	prompt, from, ok := c.TurnPrompt(tc)
	in := &prompt
	if !ok {
		in = nil
	}
	if in == nil {
		c.Log().Warn().Msg("a limit rejected a turn whose prompt is unknown; not offering a retry")
		return false
	}
	mode := c.Config().Claude.RetryAfterLimit
	r := state.Retry{Token: chat.NewToken(), Key: c.Key(), ReplyTo: state.MessageID(replyTo), Label: chat.LabelOf(*in),
		Window: rej.WindowType, ResetsAt: rej.ResetsAt, State: state.RetryAsked, CreatedAt: m.host.Now(), CreatedBy: from,
		Project: c.SessionPlace().Project, Branch: c.SessionPlace().Branch} // where it goes again (limitretry_projects.go)
	notice := render.LimitRetry{State: render.LimitRetryAsked}
	switch mode {
	case config.RetryOff:
		notice.State = render.LimitRetryOff
	case config.RetryAuto:
		r.State, notice.State = state.RetryScheduled, render.LimitRetryScheduled
	}
	if mode != config.RetryOff {
		var err error
		if r.Input, err = json.Marshal(in); err == nil {
			err = m.store.PutRetry(c.Ctx(), r)
		}
		if err != nil {
			c.Log().Error().Err(err).Msg("keep a prompt for a retry after the limit")
			notice.State = render.LimitRetryOff
		}
	}
	msg := m.sendLimitNotice(c, r, notice, replyTo)
	if notice.State == render.LimitRetryOff {
		return true
	}
	away := m.away.Get(c)
	if away.notices == nil {
		away.notices = map[string]*outbox.Message{}
	}
	away.notices[r.Token] = msg
	m.pokeScheduler()
	c.Offload(func(ctx context.Context) func() { // its id, for the buttons after a restart and the edits
		res, err := msg.Sent().Wait(ctx)
		if err != nil {
			return nil
		}
		if err := m.store.SetRetryMessage(ctx, r.Token, state.MessageID(res.MessageID)); err != nil {
			zerolog.Ctx(ctx).Error().Err(err).Msg("record the retry notice")
		}
		return nil
	})
	return true
}

// limitNotice renders a retry's notice in its current state.
func (m *Module) limitNotice(c *chat.Chat, r state.Retry, n render.LimitRetry) (string, render.Keyboard) {
	loc := c.Config().Telegram.Location()
	n.ResetsAt, n.Label, n.Window = r.ResetsAt.In(loc), r.Label, r.Window
	if !n.At.IsZero() {
		n.At = n.At.In(loc)
	}
	n.RetryData, n.DropData = chat.CallbackData(btnRetryLimit, r.Token), chat.CallbackData(btnDropRetry, r.Token)
	return render.RenderLimitRetry(n, m.host.Now().In(loc))
}

func (m *Module) sendLimitNotice(c *chat.Chat, r state.Retry, n render.LimitRetry, replyTo int) *outbox.Message {
	html, kb := m.limitNotice(c, r, n)
	return c.SendMessage(outbox.High, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: "limit-retry"})
}

// editLimitNotice shows a retry's new state in its notice.
//
// The notice is edited through the handle its send returned while this run
// has it: the id the state database keeps is recorded only once Telegram
// answered that send, which under load can come after the retry fired.
func (m *Module) editLimitNotice(c *chat.Chat, r state.Retry, n render.LimitRetry) {
	msg := m.away.Get(c).notices[r.Token]
	if msg == nil {
		if r.MessageID == 0 {
			return
		}
		msg = c.Message(int(r.MessageID))
	}
	html, kb := m.limitNotice(c, r, n)
	c.EditMessage(msg, outbox.High, outbox.Content{Text: html, Keyboard: kb})
}

// onRetryPress applies ⏰ Retry or ✖️ Drop, pressed on the notice msgID.
// Each works once; a press that lost the race (or came after the prompt
// was sent) changes nothing.
func (m *Module) onRetryPress(c *chat.Chat, token string, msgID int, kind chat.ButtonKind, from models.User) {
	to, fromStates, shown := state.RetryScheduled, []state.RetryState{state.RetryAsked}, render.LimitRetryScheduled
	if kind == btnDropRetry {
		to, fromStates, shown = state.RetryDropped, []state.RetryState{state.RetryAsked, state.RetryScheduled}, render.LimitRetryDropped
		if !m.away.Get(c).handedOver[token] { // still waiting for the chat: Drop stops it (pending.go)
			fromStates = append(fromStates, state.RetryFiring)
		}
	}
	ok, err := m.store.DecideRetry(c.Ctx(), token, to, state.UserID(from.ID), fromStates...)
	if err != nil {
		c.Log().Error().Err(err).Msg("decide a retry after a limit")
	}
	if !ok {
		return
	}
	r, err := m.store.GetRetry(c.Ctx(), token)
	if err != nil {
		c.Log().Error().Err(err).Msg("read a retry after a limit")
		return
	}
	if r.MessageID == 0 { // pressed before its id was recorded
		r.MessageID = state.MessageID(msgID)
		if err := m.store.SetRetryMessage(c.Ctx(), token, r.MessageID); err != nil {
			c.Log().Error().Err(err).Msg("record the retry notice")
		}
	}
	m.editLimitNotice(c, r, render.LimitRetry{State: shown, By: chat.UserName(from)})
	if to == state.RetryDropped {
		delete(m.away.Get(c).notices, token)
	}
	m.pokeScheduler() // a retry may be due already, or no longer
}

// fireRetry sends a retry's prompt again; the scheduler claimed it.
func (m *Module) fireRetry(c *chat.Chat, r state.Retry) {
	if !m.retryStillFiring(c, r) { // pending.go
		c.Log().Info().Msg("not sending a prompt again after its limit: it was dropped while it waited")
		return
	}
	var in runner.UserInput
	if err := json.Unmarshal(r.Input, &in); err != nil {
		c.Log().Error().Err(err).Msg("read a prompt kept for a retry")
		m.finishRetry(c, r, state.RetryDropped)
		m.editLimitNotice(c, r, render.LimitRetry{State: render.LimitRetryDropped})
		c.Reply("⚠️ “"+render.EscapeHTML(render.Truncate(r.Label, 60))+"” could not be sent again after the limit: untether could not read the prompt it kept ("+
			render.EscapeHTML(err.Error())+"). Please send it again.", int(r.ReplyTo))
		return
	}
	c.FlushPending()              // an album or forwards being collected go first, where they were sent (the phone module)
	if !m.enterRetryPlace(c, r) { // limitretry_projects.go
		return
	}
	m.editLimitNotice(c, r, render.LimitRetry{State: render.LimitRetrySent, At: m.host.Now()})
	c.Log().Info().Time("resets_at", r.ResetsAt).Msg("sending a prompt again after its limit reset")
	m.handOverRetry(c, r) // pending.go
	c.SendOutgoing(chat.NewOutgoing(in, int(r.ReplyTo), r.CreatedBy).OnSettled(func() { m.finishRetry(c, r, state.RetrySent) }))
}

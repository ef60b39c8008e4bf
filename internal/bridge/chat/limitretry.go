package chat

import (
	"encoding/json"

	"github.com/go-telegram/bot/models"

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
func (c *Chat) answerLimit(tc runner.TurnCompleted, replyTo int) bool {
	rej := c.away.rejection
	c.away.rejection = nil
	if tc.OK || rej == nil {
		return false
	}
	var (
		in   *runner.UserInput
		from state.UserID
	)
	for _, u := range append(append([]runner.MessageUUID(nil), tc.Messages...), c.started) {
		if o := c.inputs[u]; o != nil {
			in, from = &o.input, o.from
			break
		}
	}
	if in == nil {
		c.log.Warn().Msg("a limit rejected a turn whose prompt is unknown; not offering a retry")
		return false
	}
	mode := c.b.Config().Claude.RetryAfterLimit
	r := state.Retry{Token: newToken(), Key: c.key, ReplyTo: state.MessageID(replyTo), Label: labelOf(*in),
		Window: rej.WindowType, ResetsAt: rej.ResetsAt, State: state.RetryAsked, CreatedAt: c.b.now(), CreatedBy: from,
		Project: c.sessPlace.Project, Branch: c.sessPlace.Branch} // where it goes again (limitretry_projects.go)
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
			err = c.b.store.PutRetry(c.ctx(), r)
		}
		if err != nil {
			c.log.Error().Err(err).Msg("keep a prompt for a retry after the limit")
			notice.State = render.LimitRetryOff
		}
	}
	msg := c.sendLimitNotice(r, notice, replyTo)
	if notice.State == render.LimitRetryOff {
		return true
	}
	c.b.pokeScheduler()
	// Taken on the actor: ensureSession replaces c.log while this waits.
	ctx, log := c.ctx(), c.log
	go func() { // its id, for the buttons after a restart and the edits
		res, err := msg.Sent().Wait(ctx)
		if err != nil {
			return
		}
		if err := c.b.store.SetRetryMessage(ctx, r.Token, state.MessageID(res.MessageID)); err != nil {
			log.Error().Err(err).Msg("record the retry notice")
		}
	}()
	return true
}

// limitNotice renders a retry's notice in its current state.
func (c *Chat) limitNotice(r state.Retry, n render.LimitRetry) (string, render.Keyboard) {
	loc := c.b.Config().Telegram.Location()
	n.ResetsAt, n.Label, n.Window = r.ResetsAt.In(loc), r.Label, r.Window
	if !n.At.IsZero() {
		n.At = n.At.In(loc)
	}
	n.RetryData, n.DropData = callbackData(btnRetryLimit, r.Token), callbackData(btnDropRetry, r.Token)
	return render.RenderLimitRetry(n, c.b.now().In(loc))
}

func (c *Chat) sendLimitNotice(r state.Retry, n render.LimitRetry, replyTo int) *outbox.Message {
	html, kb := c.limitNotice(r, n)
	return c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: "limit-retry"})
}

// editLimitNotice shows a retry's new state in its notice.
func (c *Chat) editLimitNotice(r state.Retry, n render.LimitRetry) {
	if r.MessageID == 0 {
		return
	}
	html, kb := c.limitNotice(r, n)
	c.b.out.Edit(c.ctx(), c.b.out.Adopt(c.outKey, outbox.MessageID(r.MessageID)), outbox.High, outbox.Content{Text: html, Keyboard: kb})
}

// onRetryPress applies ⏰ Retry or ✖️ Drop, pressed on the notice msgID.
// Each works once; a press that lost the race (or came after the prompt
// was sent) changes nothing.
func (c *Chat) onRetryPress(token string, msgID int, kind buttonKind, from models.User) {
	to, fromStates, shown := state.RetryScheduled, []state.RetryState{state.RetryAsked}, render.LimitRetryScheduled
	if kind == btnDropRetry {
		to, fromStates, shown = state.RetryDropped, []state.RetryState{state.RetryAsked, state.RetryScheduled}, render.LimitRetryDropped
		if !c.away.handedOver[token] { // still waiting for the chat: Drop stops it (pending_runs.go)
			fromStates = append(fromStates, state.RetryFiring)
		}
	}
	ok, err := c.b.store.DecideRetry(c.ctx(), token, to, state.UserID(from.ID), fromStates...)
	if err != nil {
		c.log.Error().Err(err).Msg("decide a retry after a limit")
	}
	if !ok {
		return
	}
	r, err := c.b.store.GetRetry(c.ctx(), token)
	if err != nil {
		c.log.Error().Err(err).Msg("read a retry after a limit")
		return
	}
	if r.MessageID == 0 { // pressed before its id was recorded
		r.MessageID = state.MessageID(msgID)
		if err := c.b.store.SetRetryMessage(c.ctx(), token, r.MessageID); err != nil {
			c.log.Error().Err(err).Msg("record the retry notice")
		}
	}
	c.editLimitNotice(r, render.LimitRetry{State: shown, By: userName(from)})
	c.b.pokeScheduler() // a retry may be due already, or no longer
}

// fireRetry sends a retry's prompt again; the scheduler claimed it.
func (c *Chat) fireRetry(r state.Retry) {
	if !c.retryStillFiring(r) { // pending_runs.go
		c.log.Info().Msg("not sending a prompt again after its limit: it was dropped while it waited")
		return
	}
	var in runner.UserInput
	if err := json.Unmarshal(r.Input, &in); err != nil {
		c.log.Error().Err(err).Msg("read a prompt kept for a retry")
		c.finishRetry(r, state.RetryDropped)
		c.editLimitNotice(r, render.LimitRetry{State: render.LimitRetryDropped})
		c.reply("⚠️ “"+render.EscapeHTML(render.Truncate(r.Label, 60))+"” could not be sent again after the limit: untether could not read the prompt it kept ("+
			render.EscapeHTML(err.Error())+"). Please send it again.", int(r.ReplyTo))
		return
	}
	c.flushPending()           // an album or forwards being collected go first, where they were sent (batch.go)
	if !c.enterRetryPlace(r) { // limitretry_projects.go
		return
	}
	c.editLimitNotice(r, render.LimitRetry{State: render.LimitRetrySent, At: c.b.now()})
	c.log.Info().Time("resets_at", r.ResetsAt).Msg("sending a prompt again after its limit reset")
	c.handOverRetry(r) // pending_runs.go
	c.sendOutgoing(&Outgoing{input: in, msgID: int(r.ReplyTo), label: labelOf(in), from: r.CreatedBy,
		settled: func() { c.finishRetry(r, state.RetrySent) }})
}

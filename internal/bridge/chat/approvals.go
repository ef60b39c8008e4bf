package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Approval is a pending can_use_tool request shown with buttons.
type Approval struct {
	token    string
	req      runner.ApprovalRequested
	msg      *outbox.Message
	created  time.Time
	deadline time.Time
	sess     *runner.Session
	q        *questionnaire // AskUserQuestion only
	// decided is what resolve recorded, for the approval-end hooks that
	// closeApproval runs.
	decided state.Decision
}

func (c *Chat) requestApproval(req runner.ApprovalRequested) {
	for _, h := range c.b.reg.onRequest { // the settings module: no suggestion of a mode not allowed
		h(c, &req)
	}
	cfg := c.b.Config()
	now := time.Now()
	a := &Approval{token: NewToken(), req: req, created: now, deadline: now.Add(cfg.Claude.ApprovalTimeout.Std()), sess: c.sess}
	var (
		html string
		kb   render.Keyboard
	)
	if req.Tool == "AskUserQuestion" {
		a.q = newQuestionnaire(req)
		html, kb = c.renderQuestion(a)
	} else {
		btns := render.ApprovalButtons{
			Approve: CallbackData(btnApprove, a.token),
			Deny:    CallbackData(btnDeny, a.token),
			Always:  CallbackData(btnAlways, a.token),
		}
		for _, h := range c.b.reg.onApprove { // the files module: 📄 Full diff, shown when the preview is cut
			h(c, a, &btns)
		}
		html, kb = render.RenderApproval(req, btns)
	}
	// Recorded before the message exists, so a press after a crash finds
	// the request (and learns that it expired).
	if err := c.b.store.PutApproval(c.ctx(), state.Approval{Token: a.token, Key: c.key, RequestID: string(req.RequestID),
		SessionID: c.rec.SessionID, Tool: req.Tool, Summary: req.Summary, InputJSON: req.Input,
		Suggestions: req.Suggestions, CreatedAt: now, ExpiresAt: a.deadline}); err != nil {
		c.logger().Error().Err(err).Msg("record approval")
	}
	c.approvals[a.token] = a
	c.byRequest[req.RequestID] = a.token
	c.b.registerButton(a.token, c.key)
	replyTo := 0
	if c.turn != nil {
		replyTo = c.turn.replyTo
	}
	a.msg = c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagApproval + a.token})
	// The message id is stored as soon as it exists (off the actor): after
	// a crash, reconciliation finds the pending approval and its message.
	ctx, log := c.ctx(), c.logger()
	c.b.goTracked(func() {
		res, err := a.msg.Sent().Wait(context.WithoutCancel(c.b.runCtx))
		if err != nil {
			return
		}
		if err := c.b.store.SetApprovalMessage(ctx, a.token, state.MessageID(res.MessageID)); err != nil {
			log.Error().Err(err).Msg("record approval message")
		}
	})
}

// pendingItems lists the open approvals for /status, oldest first.
func (c *Chat) pendingItems() []render.PendingItem {
	out := make([]render.PendingItem, 0, len(c.approvals))
	for _, a := range c.approvals {
		tool := a.req.DisplayName
		switch a.req.Tool {
		case "AskUserQuestion":
			tool = "Question"
		case "ExitPlanMode":
			tool = "Plan"
		}
		if tool == "" {
			tool = a.req.Tool
		}
		out = append(out, render.PendingItem{Tool: tool, Summary: a.req.Summary, Since: a.created})
	}
	slices.SortFunc(out, func(x, y render.PendingItem) int { return x.Since.Compare(y.Since) })
	return out
}

func UserName(u models.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = fmt.Sprint(u.ID)
	}
	return name
}

// decide applies an Approve, Deny or Always press to a pending approval.
func (c *Chat) decide(a *Approval, p Press) {
	var (
		d       runner.Decision
		outcome render.Decision
		stDec   state.Decision
	)
	if a.q != nil && p.Kind != btnDeny {
		return // a question is answered, never approved
	}
	switch p.Kind {
	case btnApprove:
		d, outcome, stDec = runner.Decision{Behavior: runner.Allow}, render.DecisionApproved, state.DecisionAllow
	case btnDeny:
		msg := "The user denied this action from Telegram."
		switch a.req.Tool {
		case "ExitPlanMode":
			msg = "The user wants to keep planning; revise the plan."
		case "AskUserQuestion":
			msg = "The user chose not to answer from Telegram."
		}
		d, outcome, stDec = runner.Decision{Behavior: runner.Deny, Message: msg}, render.DecisionDenied, state.DecisionDeny
	case btnAlways:
		d = runner.Decision{Behavior: runner.Allow, UpdatedPermissions: a.req.Suggestions}
		outcome, stDec = render.DecisionAlwaysAllowed, state.DecisionAlways
	default:
		return
	}
	c.resolve(a, d, outcome, stDec, &p.From, "")
}

// resolve writes the decision to the CLI and only then records and shows
// it, so the audit log never claims a decision Claude did not get. from is
// nil when untether decided (expiry).
func (c *Chat) resolve(a *Approval, d runner.Decision, outcome render.Decision, stDec state.Decision, from *models.User, note string) {
	var (
		by  string
		uid state.UserID
	)
	if from != nil {
		by, uid = UserName(*from), state.UserID(from.ID)
	}
	if err := a.sess.Respond(a.req.RequestID, d); err != nil {
		if errors.Is(err, runner.ErrUnknownRequest) {
			// The CLI withdrew the request, or its process ended, before
			// the press was handled: nobody decided anything.
			c.logger().Info().Err(err).Msg("approval withdrawn before the answer")
			outcome, stDec, by, uid, note = render.DecisionWithdrawn, state.DecisionWithdrawn, "", 0, ""
		} else {
			// Recorded as interrupted (the request ends unanswered), the
			// note saying why and what the user chose.
			c.logger().Error().Err(err).Str("chosen", string(stDec)).Msg("could not reach Claude with the approval answer")
			note = strings.TrimSpace("could not reach Claude (" + err.Error() + "); chosen: " + string(stDec) + " " + note)
			outcome, stDec = render.Undelivered(outcome), state.DecisionInterrupted
		}
	}
	if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, uid, time.Now(), note); err != nil {
		c.logger().Error().Err(err).Msg("record approval decision")
	}
	a.decided = stDec
	c.closeApproval(a, "", outcome, &by, note)
	switch {
	case c.turn == nil:
	case from == nil:
		c.turn.view.Expire(a.req.RequestID) // the refusal is not the user's
	default:
		c.turn.view.Resolve(a.req.RequestID)
	}
}

// closeApproval edits the approval message to its outcome, removes its
// buttons and forgets it. stDec, when set, is recorded (for outcomes no
// user chose and no answer was written for: withdrawn); resolve records the
// rest itself, after the CLI has the answer.
func (c *Chat) closeApproval(a *Approval, stDec state.Decision, outcome render.Decision, by *string, note string) {
	if a == nil {
		return
	}
	now := time.Now()
	if stDec != "" {
		if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, 0, now, note); err != nil && !errors.Is(err, state.ErrAlreadyDecided) {
			c.logger().Error().Err(err).Msg("record approval outcome")
		}
	}
	who := ""
	if by != nil {
		who = *by
	}
	html := render.RenderApprovalDecided(a.req, outcome, who, now)
	c.b.out.Edit(c.ctx(), a.msg, outbox.High, outbox.Content{Text: html})
	delete(c.approvals, a.token)
	delete(c.byRequest, a.req.RequestID)
	c.b.forgetButton(a.token)
	c.updateCounts()
	if stDec == "" {
		stDec = a.decided
	}
	c.approvalEnded(a, stDec)
}

// approvalEnded runs the approval-end hooks (the metrics).
func (c *Chat) approvalEnded(a *Approval, d state.Decision) {
	for _, h := range c.b.reg.onApprovalEnd {
		h(c, a, d)
	}
}

func (c *Chat) expireApproval(a *Approval) {
	c.resolve(a, runner.Decision{Behavior: runner.Deny, Message: "Nobody answered this request in time, so it was denied."},
		render.DecisionExpired, state.DecisionExpired, nil, "approval timeout")
}

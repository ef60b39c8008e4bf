package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// approval is a pending can_use_tool request shown with buttons.
type approval struct {
	token    string
	req      runner.ApprovalRequested
	msg      *outbox.Message
	deadline time.Time
	answers  map[string]string // AskUserQuestion: question → chosen label
	options  []optionRef       // button index → question/label
	sess     *runner.Session
}

type optionRef struct{ question, label string }

func (c *chat) onPress(p *press) {
	switch p.kind {
	case btnCancel:
		if c.turn != nil && c.turn.cancelToken == p.token && !c.turn.done {
			c.cancelTurn()
		}
	case btnKeepWaiting:
		c.keepWaiting(p)
	case btnPick:
		c.onPick(p)
	default:
		a, ok := c.approvals[p.token]
		if !ok {
			return
		}
		c.decide(a, p)
	}
}

func (c *chat) requestApproval(req runner.ApprovalRequested) {
	req.Suggestions = c.allowedSuggestions(req.Suggestions) // modes.go
	cfg := c.b.Config()
	now := time.Now()
	a := &approval{token: newToken(), req: req, deadline: now.Add(cfg.Claude.ApprovalTimeout.Std()),
		answers: map[string]string{}, sess: c.sess}
	buttons := render.ApprovalButtons{
		Approve: callbackData(btnApprove, a.token, 0),
		Deny:    callbackData(btnDeny, a.token, 0),
		Always:  callbackData(btnAlways, a.token, 0),
	}
	for _, q := range req.Questions {
		for _, o := range q.Options {
			buttons.Options = append(buttons.Options, callbackData(btnOption, a.token, len(a.options)))
			a.options = append(a.options, optionRef{question: q.Question, label: o.Label})
		}
	}
	html, kb := render.RenderApproval(req, buttons)
	// Recorded before the message exists, so a press after a crash finds
	// the request (and learns that it expired).
	if err := c.b.store.PutApproval(c.ctx(), state.Approval{Token: a.token, Key: c.key, RequestID: string(req.RequestID),
		SessionID: c.rec.SessionID, Tool: req.Tool, Summary: req.Summary, InputJSON: req.Input,
		Suggestions: req.Suggestions, CreatedAt: now, ExpiresAt: a.deadline}); err != nil {
		c.log.Error().Err(err).Msg("record approval")
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
	go func() {
		res, err := a.msg.Sent().Wait(context.WithoutCancel(c.b.runCtx))
		if err != nil {
			return
		}
		if err := c.b.store.SetApprovalMessage(c.ctx(), a.token, state.MessageID(res.MessageID)); err != nil {
			c.log.Error().Err(err).Msg("record approval message")
		}
	}()
}

func userName(u models.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = fmt.Sprint(u.ID)
	}
	return name
}

// decide applies a button press to a pending approval.
func (c *chat) decide(a *approval, p *press) {
	var (
		d       runner.Decision
		outcome render.Decision
		stDec   state.Decision
		note    string
	)
	plan := a.req.Tool == "ExitPlanMode"
	switch p.kind {
	case btnApprove:
		d, outcome, stDec = runner.Decision{Behavior: runner.Allow}, render.DecisionApproved, state.DecisionAllow
	case btnDeny:
		msg := "The user denied this action from Telegram."
		if plan {
			msg = "The user wants to keep planning; revise the plan."
		}
		d, outcome, stDec = runner.Decision{Behavior: runner.Deny, Message: msg}, render.DecisionDenied, state.DecisionDeny
	case btnAlways:
		d = runner.Decision{Behavior: runner.Allow, UpdatedPermissions: a.req.Suggestions}
		outcome, stDec = render.DecisionAlwaysAllowed, state.DecisionAlways
	case btnOption:
		if p.arg >= len(a.options) {
			return
		}
		opt := a.options[p.arg]
		a.answers[opt.question] = opt.label
		if len(a.answers) < len(a.req.Questions) {
			return // wait until every question has an answer
		}
		input := map[string]any{}
		_ = json.Unmarshal(a.req.Input, &input)
		input["answers"] = a.answers
		updated, err := json.Marshal(input)
		if err != nil {
			c.log.Error().Err(err).Msg("encode answers")
			return
		}
		labels := make([]string, 0, len(a.answers))
		for _, q := range a.req.Questions {
			labels = append(labels, a.answers[q.Question])
		}
		note = strings.Join(labels, ", ")
		d, outcome, stDec = runner.Decision{Behavior: runner.Allow, UpdatedInput: updated}, render.Answered(note), state.DecisionAnswer
	default:
		return
	}
	if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, state.UserID(p.from.ID), time.Now(), note); err != nil {
		if errors.Is(err, state.ErrAlreadyDecided) {
			return // another press won
		}
		c.log.Error().Err(err).Msg("record approval decision")
	}
	if err := a.sess.Respond(a.req.RequestID, d); err != nil {
		c.log.Warn().Err(err).Msg("answer approval")
		if errors.Is(err, runner.ErrUnknownRequest) {
			outcome = render.DecisionWithdrawn
		}
	}
	by := userName(p.from)
	c.closeApproval(a, "", outcome, &by, note)
	if c.turn != nil {
		c.turn.view.Resolve(a.req.RequestID)
	}
}

// closeApproval edits the approval message to its outcome, removes its
// buttons and forgets it. stDec, when set, is recorded (for outcomes no
// user chose: withdrawn, expired).
func (c *chat) closeApproval(a *approval, stDec state.Decision, outcome render.Decision, by *string, note string) {
	if a == nil {
		return
	}
	now := time.Now()
	if stDec != "" {
		if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, 0, now, note); err != nil && !errors.Is(err, state.ErrAlreadyDecided) {
			c.log.Error().Err(err).Msg("record approval outcome")
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
}

func (c *chat) expireApproval(a *approval) {
	if err := a.sess.Respond(a.req.RequestID, runner.Decision{Behavior: runner.Deny,
		Message: "Nobody answered this request in time, so it was denied."}); err != nil {
		c.log.Info().Err(err).Msg("deny expired approval")
	}
	c.closeApproval(a, state.DecisionExpired, render.DecisionExpired, nil, "approval timeout")
	if c.turn != nil {
		c.turn.view.Expire(a.req.RequestID) // the refusal is not the user's
	}
}

package chat

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// questionnaire is the progress of an AskUserQuestion request. Its
// questions are asked one after another in the same message (see
// render.QuestionState for why), and the CLI gets all the answers at once
// when the last one is given.
type questionnaire struct {
	render.QuestionState
	// first is the callback number of each question's first option:
	// options are numbered across all questions, so a late press on an
	// earlier question's button can never answer the current one.
	first []int
}

func newQuestionnaire(req runner.ApprovalRequested) *questionnaire {
	q := &questionnaire{first: make([]int, len(req.Questions))}
	n := 0
	for i, qq := range req.Questions {
		q.first[i] = n
		n += len(qq.Options)
	}
	if len(req.Questions) > 0 {
		q.Ticked = make([]bool, len(req.Questions[0].Options))
	}
	return q
}

// option maps a callback number to the current question's option index;
// ok is false for any other question's option.
func (q *questionnaire) option(req runner.ApprovalRequested, n int) (int, bool) {
	if q.Current >= len(req.Questions) {
		return 0, false
	}
	i := n - q.first[q.Current]
	return i, i >= 0 && i < len(req.Questions[q.Current].Options)
}

// ticked is the current question's ticked labels, in option order.
func (q *questionnaire) ticked(req runner.ApprovalRequested) []string {
	var out []string
	for i, on := range q.Ticked {
		if on {
			out = append(out, req.Questions[q.Current].Options[i].Label)
		}
	}
	return out
}

// joinAnswers joins multi-select labels the way the CLI's own dialog does
// (", ", quoting a label that contains ", " or a quote), so the CLI reads
// them back as the options they are.
func joinAnswers(labels []string) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		if strings.Contains(l, ", ") || strings.Contains(l, `"`) {
			b, _ := json.Marshal(l) // a string always encodes
			l = string(b)
		}
		parts[i] = l
	}
	return strings.Join(parts, ", ")
}

// renderQuestion renders a question message at its current state.
func (c *Chat) renderQuestion(a *Approval) (string, render.Keyboard) {
	q := a.q
	b := render.ApprovalButtons{Deny: CallbackData(btnDeny, a.token)}
	if q.Current < len(a.req.Questions) {
		cur := a.req.Questions[q.Current]
		kind := btnOption
		if cur.MultiSelect {
			kind = btnToggle
			b.Done = CallbackArg(btnDone, a.token, q.Current)
		}
		for i := range cur.Options {
			b.Options = append(b.Options, CallbackArg(kind, a.token, q.first[q.Current]+i))
		}
	}
	return render.RenderQuestion(a.req, q.QuestionState, b)
}

// onQuestionPress handles an option, tick or Done press.
func (c *Chat) onQuestionPress(a *Approval, p Press) {
	q := a.q
	if q == nil || q.Current >= len(a.req.Questions) {
		return
	}
	cur := a.req.Questions[q.Current]
	switch p.Kind {
	case btnOption:
		if i, ok := q.option(a.req, p.Arg); ok && !cur.MultiSelect {
			c.answerQuestion(a, cur.Options[i].Label, &p.From)
		}
	case btnToggle:
		if i, ok := q.option(a.req, p.Arg); ok && cur.MultiSelect {
			q.Ticked[i] = !q.Ticked[i]
			c.b.out.Edit(c.ctx(), a.msg, outbox.High, c.questionContent(a))
		}
	case btnDone:
		if labels := q.ticked(a.req); p.Arg == q.Current && cur.MultiSelect && len(labels) > 0 {
			c.answerQuestion(a, joinAnswers(labels), &p.From)
		}
	}
}

func (c *Chat) questionContent(a *Approval) outbox.Content {
	html, kb := c.renderQuestion(a)
	return outbox.Content{Text: html, Keyboard: kb}
}

// answerByReply takes a Telegram reply to an open question's message as the
// free-text answer ("Other") to its current question; for a multi-select
// question it is added to the ticked options. It reports whether m was such
// a reply, in which case it must not go to Claude as a prompt. The
// question's message id is known by then: a person replies only after
// seeing the message, and the outbox learns its id from the same send.
func (c *Chat) answerByReply(m *models.Message) bool {
	if m.ReplyToMessage == nil || m.From == nil {
		return false
	}
	var a *Approval
	for _, cand := range c.approvals {
		if cand.q != nil && cand.msg != nil && int(cand.msg.ID()) == m.ReplyToMessage.ID {
			a = cand
		}
	}
	if a == nil && c.awaitQuestionSend(m) {
		return true
	}
	if a == nil || a.q.Current >= len(a.req.Questions) {
		return false
	}
	text := strings.TrimSpace(m.Text)
	if text == "" {
		text = strings.TrimSpace(m.Caption)
	}
	if text == "" {
		c.reply("To answer the question in your own words, reply to it with text.", m.ID)
		return true
	}
	answer := text
	if a.req.Questions[a.q.Current].MultiSelect {
		answer = joinAnswers(append(a.q.ticked(a.req), text))
	}
	c.answerQuestion(a, answer, m.From)
	return true
}

// awaitQuestionSend handles a reply to a bot message the chat does not
// know yet while a question's message is still being sent: the user saw
// the question before the answer to its send reached the outbox (within
// milliseconds, or on a slow link), so the reply may be to it. The reply
// is handled again, in its place in the mailbox and still unconfirmed to
// Telegram, once those sends have finished; the actor does not wait.
func (c *Chat) awaitQuestionSend(m *models.Message) bool {
	if m.ReplyToMessage.From == nil || !m.ReplyToMessage.From.IsBot {
		return false
	}
	var sending []*outbox.Message
	for _, cand := range c.approvals {
		if cand.q != nil && cand.msg != nil && cand.msg.ID() == 0 {
			sending = append(sending, cand.msg)
		}
	}
	if len(sending) == 0 {
		return false
	}
	update := c.curUpdate
	c.curUpdate = 0 // confirmed when the item below is handled
	c.b.goTracked(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.b.runCtx), questionSendWait)
		defer cancel()
		for _, msg := range sending {
			_, _ = msg.Sent().Wait(ctx) // sent or not, the reply is handled again
		}
		c.post(item{updateID: update, fn: func() { c.onRepliedAgain(m) }})
	})
	return true
}

// questionSendWait bounds how long a reply waits for a question's send.
const questionSendWait = 30 * time.Second

// onRepliedAgain handles a reply awaitQuestionSend held back: an answer if
// it replies to a question now known, else the message as written.
func (c *Chat) onRepliedAgain(m *models.Message) {
	if !c.answerByReply(m) {
		c.onContent(m)
	}
}

// answerQuestion records the current question's answer and asks the next
// one, or, after the last, sends every answer to the CLI as the tool's
// updatedInput.answers (question text → answer).
func (c *Chat) answerQuestion(a *Approval, answer string, from *models.User) {
	q := a.q
	q.Answers = append(q.Answers, answer)
	q.Current++
	if q.Current < len(a.req.Questions) {
		q.Ticked = make([]bool, len(a.req.Questions[q.Current].Options))
		c.b.out.Edit(c.ctx(), a.msg, outbox.High, c.questionContent(a))
		return
	}
	input := map[string]any{}
	if err := json.Unmarshal(a.req.Input, &input); err != nil || input == nil {
		input = map[string]any{"questions": a.req.Questions}
	}
	answers := make(map[string]string, len(q.Answers))
	for i, qq := range a.req.Questions {
		answers[qq.Question] = q.Answers[i]
	}
	input["answers"] = answers
	updated, err := json.Marshal(input)
	if err != nil {
		c.logger().Error().Err(err).Msg("encode answers")
		return
	}
	note := render.QuestionAnswers(a.req, q.Answers)
	c.resolve(a, runner.Decision{Behavior: runner.Allow, UpdatedInput: updated}, render.Answered(note), state.DecisionAnswer, from, note)
}

package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// Full-stack tests of AskUserQuestion: multi-select toggles, several
// questions asked one after another, and a reply as the free-text answer.
// Each asserts what reached the model (the tool_result the CLI built from
// the answers we sent), not what the bot said.

var (
	colourQuestion = map[string]any{"question": "Which colour should the button be?", "header": "Colour", "multiSelect": false,
		"options": []any{map[string]any{"label": "Red", "description": "A red button"}, map[string]any{"label": "Blue", "description": "A blue button"}}}
	toppingsQuestion = map[string]any{"question": "Which toppings do you want?", "header": "Toppings", "multiSelect": true,
		"options": []any{map[string]any{"label": "Cheese", "description": "Grated"}, map[string]any{"label": "Ham", "description": "Smoked"},
			map[string]any{"label": "Olives", "description": "Black"}}}
)

// withQuestionScript adds the multi-select and multi-question turns to the
// usual script.
func withQuestionScript() rigOption {
	return func(r *rig) {
		var rules []fakeapi.Rule
		rules = append(rules, fakeapi.ToolTurn("ASKMULTI", "AskUserQuestion",
			map[string]any{"questions": []any{toppingsQuestion}}, "Thanks, noted the toppings.")...)
		rules = append(rules, fakeapi.ToolTurn("ASKTWO", "AskUserQuestion",
			map[string]any{"questions": []any{colourQuestion, toppingsQuestion}}, "Thanks for both answers.")...)
		r.claude = claudetest.New(r.t, fakeapi.Script{Rules: append(rules, script().Rules...)})
	}
}

// answersReceived is the text of the tool_results in the model's last call.
func (r *rig) answersReceived() string {
	calls := r.claude.API.ModelCalls()
	require.NotEmpty(r.t, calls)
	var b strings.Builder
	for _, tr := range calls[len(calls)-1].ToolResults() {
		b.WriteString(tr.Text + "\n")
	}
	return b.String()
}

// press presses the button whose text contains label on message id, failing
// when the current message has no such button.
func (r *rig) press(chat telegramtest.ChatID, id telegramtest.MessageID, label string) {
	r.t.Helper()
	m, ok := r.tg.Snapshot().Message(chat, id)
	require.True(r.t, ok)
	data := buttonData(m, label)
	require.NotEmpty(r.t, data, "button %q on %v", label, m.Keyboard)
	r.tg.UserPresses(chat, id, data)
}

// waitButton waits until message id shows a button whose text contains label.
func (r *rig) waitButton(chat telegramtest.ChatID, id telegramtest.MessageID, label string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "button "+label, func(m telegramtest.Message) bool { return m.ID == id && buttonData(m, label) != "" })
}

// waitQuestionSent waits until the bridge knows the open question's message
// id (stored once Telegram answered the send). A person can only reply
// after seeing the message, so this is when a reply can first arrive.
func (r *rig) waitQuestionSent() {
	r.t.Helper()
	require.Eventually(r.t, func() bool {
		p, err := r.store.PendingApprovals(context.Background())
		return err == nil && len(p) == 1 && p[0].MessageID != 0
	}, wait, 10*time.Millisecond)
}

func (r *rig) decided(chat telegramtest.ChatID, id telegramtest.MessageID) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "decided question", func(m telegramtest.Message) bool {
		return m.ID == id && len(m.Keyboard) == 0 && strings.Contains(m.Text, "Answered")
	})
}

func TestQuestionMultiSelect(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withQuestionScript())
	in := r.say(chat, alice, "ASKMULTI toppings")
	q := r.approvalMessage(chat, "Which toppings")
	assert.Empty(t, buttonData(q, "Done"), "nothing ticked yet, nothing to be done")
	for _, b := range q.Keyboard {
		for _, bt := range b {
			assert.LessOrEqual(t, len(bt.CallbackData), 64)
		}
	}
	r.press(chat, q.ID, "☐ Cheese")
	r.waitButton(chat, q.ID, "☑ Cheese")
	r.press(chat, q.ID, "☐ Ham")
	r.waitButton(chat, q.ID, "☑ Ham")
	r.press(chat, q.ID, "☑ Ham") // changed my mind
	r.waitButton(chat, q.ID, "☐ Ham")
	r.press(chat, q.ID, "☐ Olives")
	r.waitButton(chat, q.ID, "☑ Olives")
	r.press(chat, q.ID, "Done")
	r.finalAnswer(chat, in.ID, "Thanks, noted the toppings.")
	assert.Contains(t, r.answersReceived(), `"Which toppings do you want?"="Cheese, Olives"`, "both ticked options, and only those, reached the model")
	m := r.decided(chat, q.ID)
	assert.Contains(t, m.Text, "Cheese, Olives")
	assert.Contains(t, m.Text, "by @alice")
}

func TestQuestionSeveralAskedInTurn(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withQuestionScript())
	in := r.say(chat, alice, "ASKTWO please")
	q := r.approvalMessage(chat, "Which colour")
	assert.Contains(t, q.Text, "Which toppings", "every question is shown from the start")
	assert.Contains(t, q.Text, "Question 1 of 2")
	assert.Empty(t, buttonData(q, "Cheese"), "the second question's buttons wait their turn")
	r.press(chat, q.ID, "Blue")
	// The same message asks the second question; the model has not been
	// answered yet.
	r.waitButton(chat, q.ID, "☐ Cheese")
	assert.Len(t, r.claude.API.ModelCalls(), 1, "no answer goes to Claude before the last question")
	r.press(chat, q.ID, "☐ Ham")
	r.waitButton(chat, q.ID, "☑ Ham")
	r.press(chat, q.ID, "Done")
	r.finalAnswer(chat, in.ID, "Thanks for both answers.")
	got := r.answersReceived()
	assert.Contains(t, got, `"Which colour should the button be?"="Blue"`)
	assert.Contains(t, got, `"Which toppings do you want?"="Ham"`)
	m := r.decided(chat, q.ID)
	assert.Contains(t, m.Text, "Colour: Blue · Toppings: Ham")
}

// A reply that comes while the question's message is still being sent (the
// user sees it before the bot has the answer to its send) answers the
// question too (issue 24 §4); it waits for the send, not the actor.
func TestQuestionReplyDuringItsSendAnswersIt(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	warm := r.say(chat, alice, "warm up")
	r.finalAnswer(chat, warm.ID, "echo: warm up")
	r.tg.DelayAnswer("sendMessage", 2*time.Second)
	in := r.say(chat, alice, "ASKME which colour")
	q := r.approvalMessage(chat, "Which colour")
	r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}, "Green with stripes", telegramtest.ReplyingTo(q.ID))
	st := r.say(chat, alice, "/status")
	r.waitBot(chat, "/status, while the reply waits", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	r.tg.DelayAnswer("sendMessage", 0)
	r.finalAnswer(chat, in.ID, "Thanks, going with your answer.")
	assert.Contains(t, r.answersReceived(), `"Which colour should the button be?"="Green with stripes"`)
	for _, c := range r.claude.API.ModelCalls() {
		assert.NotEqual(t, "Green with stripes", c.LastPrompt(), "the reply was never a prompt of its own")
	}
}

func TestQuestionReplyIsTheOtherAnswer(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	t.Run("single select", func(t *testing.T) {
		r := newRig(t)
		in := r.say(chat, alice, "ASKME which colour")
		q := r.approvalMessage(chat, "Which colour")
		r.waitQuestionSent()
		r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}, "Green with stripes", telegramtest.ReplyingTo(q.ID))
		r.finalAnswer(chat, in.ID, "Thanks, going with your answer.")
		assert.Contains(t, r.answersReceived(), `"Which colour should the button be?"="Green with stripes"`)
		m := r.decided(chat, q.ID)
		assert.Contains(t, m.Text, "Green with stripes")
		// Had the reply gone to Claude as a prompt, it would be answered
		// before this later message.
		after := r.say(chat, alice, "and now?")
		r.finalAnswer(chat, after.ID, "echo: and now?")
		for _, c := range r.claude.API.ModelCalls() {
			assert.NotEqual(t, "Green with stripes", c.LastPrompt(), "the reply was never a prompt of its own")
		}
	})
	t.Run("added to the ticked options", func(t *testing.T) {
		r := newRig(t, withQuestionScript())
		in := r.say(chat, alice, "ASKMULTI toppings")
		q := r.approvalMessage(chat, "Which toppings")
		r.press(chat, q.ID, "☐ Cheese")
		r.waitButton(chat, q.ID, "☑ Cheese")
		r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}, "Pineapple", telegramtest.ReplyingTo(q.ID))
		r.finalAnswer(chat, in.ID, "Thanks, noted the toppings.")
		assert.Contains(t, r.answersReceived(), `"Which toppings do you want?"="Cheese, Pineapple"`)
	})
}

// TestQuestionSkipped: Skip answers nothing and tells Claude so.
func TestQuestionSkipped(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "ASKME which colour")
	q := r.approvalMessage(chat, "Which colour")
	r.press(chat, q.ID, "Skip")
	r.finalAnswer(chat, in.ID, "Thanks, going with your answer.")
	calls := r.claude.API.ModelCalls()
	results := calls[len(calls)-1].ToolResults()
	require.NotEmpty(t, results)
	last := results[len(results)-1]
	assert.True(t, last.IsError, "a skipped question is a refusal")
	assert.Contains(t, last.Text, "chose not to answer")
	log, err := r.store.ApprovalLog(context.Background(), state.ChatKey{Chat: state.ChatID(alice)}, 1)
	require.NoError(t, err)
	require.Len(t, log, 1)
	assert.Equal(t, state.DecisionDeny, log[0].Decision)
}

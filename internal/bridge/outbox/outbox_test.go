package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

func TestSendBuildsTelegramRequest(t *testing.T) {
	kb := approveKeyboard("42")
	kbJSON, err := json.Marshal(kb)
	require.NoError(t, err)
	tests := []struct {
		name       string
		key        ChatKey
		content    Content
		opts       SendOptions
		wantThread int
		wantMarkup string
	}{
		{name: "private chat", key: ChatKey{Chat: 42}, content: Content{Text: "<b>hi</b>"}},
		{
			name: "topic with reply, keyboard, silent", key: ChatKey{Chat: -1001, Thread: 7},
			content: Content{Text: "Allow <code>rm</code>?", Keyboard: kb}, opts: SendOptions{ReplyTo: 5, Silent: true},
			wantThread: 7, wantMarkup: string(kbJSON),
		},
		{name: "general topic is addressed without thread id", key: ChatKey{Chat: -1001, Thread: 1}, content: Content{Text: "x"}},
		{
			name: "raw JSON keyboard passes through", key: ChatKey{Chat: 3},
			content: Content{Text: "x", Keyboard: json.RawMessage(kbJSON)}, wantMarkup: string(kbJSON),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, tg := newTestOutbox(t, newAutoClock(), Options{})
			m := o.Send(bg, tt.key, High, tt.content, tt.opts)
			res, err := await(t, m.Sent())
			require.NoError(t, err)
			calls := tg.Calls()
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Equal(t, Result{MessageID: MessageID(c.MessageID), Outcome: OutcomeSent}, res)
			assert.Equal(t, res.MessageID, m.ID())
			assert.Equal(t, "sendMessage", c.Method)
			assert.Equal(t, tt.key.Chat, c.Chat)
			assert.Equal(t, tt.wantThread, c.Thread)
			assert.Equal(t, tt.content.Text, c.Text)
			assert.Equal(t, models.ParseModeHTML, c.ParseMode)
			assert.True(t, c.NoPreview, "link previews must be disabled")
			assert.Equal(t, tt.opts.Silent, c.Silent)
			assert.Equal(t, int(tt.opts.ReplyTo), c.ReplyTo)
			assert.Equal(t, tt.opts.ReplyTo != 0, c.ReplyLax, "a vanished reply target must not fail the send")
			if tt.wantMarkup == "" {
				assert.Empty(t, c.Markup)
			} else {
				assert.JSONEq(t, tt.wantMarkup, c.Markup)
			}
		})
	}
}

func TestInvalidOperationsFailWithoutRequest(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	_, err := await(t, o.Send(bg, ChatKey{Chat: 1}, High, Content{}, SendOptions{}).Sent())
	require.ErrorIs(t, err, ErrInvalid)
	_, err = await(t, o.Send(bg, ChatKey{}, High, Content{Text: "x"}, SendOptions{}).Sent())
	require.ErrorIs(t, err, ErrInvalid)
	_, err = await(t, o.Edit(bg, o.Adopt(ChatKey{Chat: 1}, 3), Low, Content{Text: "x", Keyboard: make(chan int)}))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = await(t, o.Edit(bg, o.Adopt(ChatKey{Chat: 1}, 0), Low, Content{Text: "x"}))
	require.ErrorIs(t, err, ErrInvalid, "an id-less adopted handle must not wait forever")
	assert.Empty(t, tg.Calls())
}

func TestHighPriorityFirstAndFIFOWithinPriority(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 1}
	tg.seed(1, 10, "progress 0")
	tg.seed(1, 11, "approval")
	progress, approval := o.Adopt(key, 10), o.Adopt(key, 11)

	tg.hold()
	// A high-priority call in flight holds the worker, so everything
	// below queues behind it.
	first := o.Send(bg, key, High, Content{Text: "first"}, SendOptions{})
	waitFor(t, "first call in flight", func() bool { return tg.Started() == 1 })
	ops := []*Pending{
		o.Edit(bg, progress, Low, Content{Text: "progress 1"}),
		o.Typing(bg, key),
		o.Send(bg, key, High, Content{Text: "high 1"}, SendOptions{}).Sent(),
		o.Send(bg, key, Low, Content{Text: "low 2"}, SendOptions{}).Sent(),
		o.Edit(bg, approval, High, Content{Text: "approved"}),
		o.Send(bg, key, High, Content{Text: "high 2"}, SendOptions{}).Sent(),
	}
	tg.release()
	_, err := await(t, first.Sent())
	require.NoError(t, err)
	for _, p := range ops {
		_, err := await(t, p)
		require.NoError(t, err)
	}

	var texts []string
	for _, c := range tg.Calls() {
		texts = append(texts, c.Text)
	}
	assert.Equal(t, []string{"first", "high 1", "approved", "high 2", "progress 1", "low 2"}, texts)
	typing, _ := await(t, ops[1])
	assert.Equal(t, OutcomeSkipped, typing.Outcome, "typing requested before a sent message is moot")
}

func TestEditsCoalesceLatestWins(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 7}
	tg.hold()
	m := o.Send(bg, key, Low, Content{Text: "working"}, SendOptions{})
	waitFor(t, "send in flight", func() bool { return tg.Started() == 1 })
	const n = 200
	kb := approveKeyboard("x")
	edits := make([]*Pending, n)
	for i := range edits {
		edits[i] = o.Edit(bg, m, Low, Content{Text: fmt.Sprintf("step %d", i), Keyboard: kb})
	}
	tg.release()

	res, err := await(t, edits[n-1])
	require.NoError(t, err)
	assert.Equal(t, Result{MessageID: m.ID(), Outcome: OutcomeEdited}, res)
	for _, p := range edits[:n-1] {
		res, err := await(t, p)
		require.NoError(t, err)
		assert.Equal(t, OutcomeSuperseded, res.Outcome)
	}
	var editCalls []call
	for _, c := range tg.Calls() {
		if c.Method == "editMessageText" {
			editCalls = append(editCalls, c)
		}
	}
	require.Len(t, editCalls, 1)
	assert.Equal(t, fmt.Sprintf("step %d", n-1), editCalls[0].Text)
	assert.Equal(t, int(m.ID()), editCalls[0].MessageID)
	assert.Contains(t, editCalls[0].Markup, `"ap:x"`)
	assert.Equal(t, uint64(n-1), o.Stats().Coalesced)
}

func TestEditWaitsForItsSend(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{OvertakeAfter: -1})
	key := ChatKey{Chat: 8}
	tg.hold()
	m := o.Send(bg, key, Low, Content{Text: "draft"}, SendOptions{})
	waitFor(t, "send in flight", func() bool { return tg.Started() == 1 })
	// High priority, yet it cannot overtake the send it targets.
	e := o.Edit(bg, m, High, Content{Text: "final draft"})
	tg.release()

	res, err := await(t, e)
	require.NoError(t, err)
	assert.Equal(t, OutcomeEdited, res.Outcome)
	calls := tg.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, []string{"draft", "final draft"}, texts(calls))
	assert.Equal(t, "editMessageText", calls[1].Method)
	assert.Equal(t, int(m.ID()), calls[1].MessageID)
}

func TestEditOfAQueuedSendGoesOutWithIt(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 8}
	tg.hold()
	blocker := o.Send(bg, key, High, Content{Text: "blocker"}, SendOptions{}) // holds the worker
	waitFor(t, "blocker in flight", func() bool { return tg.Started() == 1 })
	m := o.Send(bg, key, Low, Content{Text: "draft"}, SendOptions{})
	first := o.Edit(bg, m, Low, Content{Text: "draft 2"})
	e := o.Edit(bg, m, High, Content{Text: "final draft", Keyboard: approveKeyboard("1")})
	tg.release()

	res, err := await(t, e)
	require.NoError(t, err)
	assert.Equal(t, Result{MessageID: m.ID(), Outcome: OutcomeEdited}, res)
	res, err = await(t, first)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome)
	_, err = await(t, blocker.Sent())
	require.NoError(t, err)
	calls := tg.Calls()
	require.Len(t, calls, 2, "one send showing the latest content, no edit")
	assert.Equal(t, []string{"blocker", "final draft"}, texts(calls))
	assert.Equal(t, "sendMessage", calls[1].Method)
	assert.NotEmpty(t, calls[1].Markup)
	// Nothing is left to change: the same content again costs no call.
	res, err = await(t, o.Edit(bg, m, Low, Content{Text: "final draft", Keyboard: approveKeyboard("1")}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeUnchanged, res.Outcome)
	assert.Len(t, tg.Calls(), 2)
}

// Withdraw drops a send still queued (no call, Sent fails with
// ErrDeleted) and leaves a send already taken for its call, or made, alone.
func TestWithdrawOnlyDropsAQueuedSend(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 8}
	tg.hold()
	inFlight := o.Send(bg, key, Low, Content{Text: "progress on its way"}, SendOptions{})
	waitFor(t, "the send in flight", func() bool { return tg.Started() == 1 })
	queued := o.Send(bg, key, Low, Content{Text: "progress still queued"}, SendOptions{})
	assert.True(t, o.Withdraw(queued))
	_, err := await(t, queued.Sent())
	require.ErrorIs(t, err, ErrDeleted)
	assert.False(t, o.Withdraw(inFlight), "a send on its way is not withdrawn")
	tg.release()
	_, err = await(t, inFlight.Sent())
	require.NoError(t, err)
	assert.False(t, o.Withdraw(inFlight), "nor one made")
	require.NoError(t, o.Close(bg))
	assert.Equal(t, []string{"progress on its way"}, texts(tg.Calls()))
}

func TestDeleteOfAQueuedSendMakesNoCall(t *testing.T) {
	j := newMemJournal()
	o, tg := newTestOutbox(t, newAutoClock(), Options{Journal: j})
	key := ChatKey{Chat: 8}
	tg.hold()
	blocker := o.Send(bg, key, High, Content{Text: "blocker"}, SendOptions{}) // holds the worker
	waitFor(t, "blocker in flight", func() bool { return tg.Started() == 1 })
	notice := o.Send(bg, key, High, Content{Text: "waiting for a slot"}, SendOptions{Tag: "slot-wait"}) // journaled
	res, err := await(t, o.Delete(bg, notice, Low))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)
	_, err = await(t, notice.Sent())
	require.ErrorIs(t, err, ErrDeleted)
	require.Len(t, j.Pending(), 1, "only the blocker is still journaled: a deleted message is not replayed")
	m := o.Send(bg, key, Low, Content{Text: "progress"}, SendOptions{})
	edit := o.Edit(bg, m, Low, Content{Text: "progress 2"})
	res, err = await(t, o.Delete(bg, m, Low))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)
	_, err = await(t, m.Sent())
	require.ErrorIs(t, err, ErrDeleted, "never sent")
	res, err = await(t, edit)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome)
	_, err = await(t, o.Edit(bg, m, Low, Content{Text: "late"}))
	require.ErrorIs(t, err, ErrDeleted)
	tg.release()
	_, err = await(t, blocker.Sent())
	require.NoError(t, err)
	require.NoError(t, o.Close(bg))
	assert.Equal(t, []string{"blocker"}, texts(tg.Calls()))
	assert.Equal(t, uint64(2), o.Stats().Dropped)
	assert.Empty(t, j.Pending())
}

func TestIdenticalEditIsNotSent(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 9}
	kb := approveKeyboard("1")
	m := o.Send(bg, key, Low, Content{Text: "a", Keyboard: kb}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)

	steps := []struct {
		content Content
		want    Outcome
	}{
		{Content{Text: "a", Keyboard: kb}, OutcomeUnchanged},
		{Content{Text: "a"}, OutcomeEdited}, // dropping the keyboard is a change
		{Content{Text: "b"}, OutcomeEdited},
		{Content{Text: "b"}, OutcomeUnchanged},
		{Content{Text: "a"}, OutcomeEdited}, // back to an older content is a change
	}
	for i, s := range steps {
		res, err := await(t, o.Edit(bg, m, Low, s.content))
		require.NoError(t, err)
		assert.Equal(t, s.want, res.Outcome, "step %d", i)
	}
	assert.Len(t, tg.Calls(), 4, "one send and three real edits")
	assert.Equal(t, uint64(2), o.Stats().Unchanged)
}

func TestNotModifiedIsSuccess(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	tg.seed(5, 50, "same")
	m := o.Adopt(ChatKey{Chat: 5}, 50) // after a restart: what it shows is unknown

	res, err := await(t, o.Edit(bg, m, High, Content{Text: "same"}))
	require.NoError(t, err)
	assert.Equal(t, Result{MessageID: 50, Outcome: OutcomeUnchanged}, res)
	calls := tg.Calls()
	require.Len(t, calls, 1, "not modified must not be retried")
	require.ErrorIs(t, calls[0].Err, bot.ErrorBadRequest)

	res, err = await(t, o.Edit(bg, m, High, Content{Text: "same"}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeUnchanged, res.Outcome)
	assert.Len(t, tg.Calls(), 1, "now the outbox knows what the message shows")
}

func TestEditOfVanishedMessageSendsNewOne(t *testing.T) {
	var mu sync.Mutex
	var replaced [][2]MessageID
	o, tg := newTestOutbox(t, newAutoClock(), Options{OnReplaced: func(m *Message, oldID, newID MessageID) {
		mu.Lock()
		replaced = append(replaced, [2]MessageID{oldID, newID})
		mu.Unlock()
	}})
	key := ChatKey{Chat: -300, Thread: 4}
	m := o.Adopt(key, 999) // the user deleted it while we were down
	kb := approveKeyboard("9")

	res, err := await(t, o.Edit(bg, m, High, Content{Text: "<b>final</b>", Keyboard: kb}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeReplaced, res.Outcome)
	assert.NotEqual(t, MessageID(999), res.MessageID)
	assert.Equal(t, res.MessageID, m.ID())

	calls := tg.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "editMessageText", calls[0].Method)
	assert.Equal(t, "sendMessage", calls[1].Method)
	assert.Equal(t, 4, calls[1].Thread)
	assert.Equal(t, "<b>final</b>", calls[1].Text)
	assert.Equal(t, calls[0].Markup, calls[1].Markup, "the keyboard survives the replacement")
	mu.Lock()
	assert.Equal(t, [][2]MessageID{{999, res.MessageID}}, replaced)
	mu.Unlock()

	_, err = await(t, o.Edit(bg, m, Low, Content{Text: "later"}))
	require.NoError(t, err)
	calls = tg.Calls()
	assert.Equal(t, int(res.MessageID), calls[len(calls)-1].MessageID, "later edits target the new message")
}

func TestParseErrorFallsBackToPlainText(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 11}
	m := o.Send(bg, key, High, Content{Text: `<b>Result</b>: a <x> b &amp; c`}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)
	tg.seed(11, 500, "old")
	e := o.Edit(bg, o.Adopt(key, 500), High, Content{Text: `<i>x</i> <y> <a href="https://e.x/">docs</a>`})
	_, err = await(t, e)
	require.NoError(t, err)

	calls := tg.Calls()
	require.Len(t, calls, 4)
	require.ErrorIs(t, calls[0].Err, bot.ErrorBadRequest)
	assert.Equal(t, "Result: a <x> b & c", calls[1].Text)
	assert.Empty(t, calls[1].ParseMode)
	assert.Equal(t, "x <y> docs (https://e.x/)", calls[3].Text)
	assert.Empty(t, calls[3].ParseMode)
	assert.Equal(t, uint64(2), o.Stats().PlainText)
}

func TestTooLongTextIsSplitInOrder(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 12}
	body := strings.Repeat("lorem ipsum &amp; dolor ", 500) // 11,500 visible chars
	m := o.Send(bg, key, High, Content{Text: "<b>" + body + "</b>", Keyboard: approveKeyboard("l")}, SendOptions{})
	after := o.Send(bg, key, High, Content{Text: "after"}, SendOptions{})
	res, err := await(t, m.Sent())
	require.NoError(t, err)
	_, err = await(t, after.Sent())
	require.NoError(t, err)

	calls := tg.Calls()
	require.GreaterOrEqual(t, len(calls), 4)
	require.ErrorIs(t, calls[0].Err, bot.ErrorBadRequest)
	chunks := calls[1 : len(calls)-1]
	var joined strings.Builder
	for i, c := range chunks {
		require.NoError(t, c.Err)
		assert.LessOrEqual(t, visibleLen(c.Text, c.ParseMode), DefaultSplitLimit)
		assert.Empty(t, c.ParseMode)
		assert.Equal(t, i == 0, c.Markup != "", "keyboard only on the first chunk")
		joined.WriteString(c.Text)
	}
	assert.Equal(t, plainText(body), joined.String(), "nothing lost")
	assert.Equal(t, MessageID(chunks[0].MessageID), res.MessageID, "the handle is the first chunk")
	assert.Equal(t, "after", calls[len(calls)-1].Text, "later sends wait for all chunks")
}

package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"
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

func TestRateLimitPausesOnlyThatChat(t *testing.T) {
	clock := newManualClock()
	const jitter = 700 * time.Millisecond
	o, tg := newTestOutbox(t, clock, Options{Jitter: func(max time.Duration) time.Duration {
		if max == DefaultRateLimitJitter {
			return jitter
		}
		return 0
	}})
	hit := false
	tg.setScript(func(c call) error {
		if c.Chat == 100 && !hit {
			hit = true
			return errTooMany(30)
		}
		return nil
	})
	t0 := clock.Now()
	a := o.Send(bg, ChatKey{Chat: 100}, High, Content{Text: "answer A"}, SendOptions{})
	waitFor(t, "A's first attempt", func() bool { return len(tg.callsTo(100)) == 1 })
	resume := t0.Add(30*time.Second + jitter)
	waitFor(t, "A paused until retry_after+jitter", func() bool { return clock.hasWaiterAt(resume) })

	b := o.Send(bg, ChatKey{Chat: 200}, High, Content{Text: "answer B"}, SendOptions{})
	_, err := await(t, b.Sent())
	require.NoError(t, err, "another chat is not paused")
	assert.Equal(t, t0, tg.callsTo(200)[0].At)

	clock.Advance(30 * time.Second)
	assert.Len(t, tg.callsTo(100), 1, "no call inside the window")
	clock.Advance(jitter)
	_, err = await(t, a.Sent())
	require.NoError(t, err)
	callsA := tg.callsTo(100)
	require.Len(t, callsA, 2)
	assert.False(t, callsA[1].At.Before(resume), "retried at %v, window ends %v", callsA[1].At, resume)
	assert.Equal(t, "answer A", callsA[1].Text, "the same operation is retried")
	assert.Equal(t, uint64(1), o.Stats().RateLimited)
}

// assertRespects429 checks that after every 429 no call reached the chat
// before retry_after had passed. A call already in flight when the 429 was
// answered does not count.
func assertRespects429(t *testing.T, calls []call) {
	t.Helper()
	for i, c := range calls {
		var tmr *bot.TooManyRequestsError
		if !errors.As(c.Err, &tmr) {
			continue
		}
		end := c.At.Add(time.Duration(tmr.RetryAfter) * time.Second)
		for _, later := range calls[i+1:] {
			if later.StartSeq > c.DoneSeq {
				assert.False(t, later.At.Before(end), "call at %v inside 429 window ending %v", later.At, end)
			}
		}
	}
}

func TestRateLimitStormStillDeliversFinalAnswer(t *testing.T) {
	clock := newAutoClock()
	// The auto clock makes any call in flight count as hanging at once;
	// this test is about one call at a time meeting a storm.
	o, tg := newTestOutbox(t, clock, Options{Jitter: nil, OvertakeAfter: -1})
	key := ChatKey{Chat: -500}
	storm := 0
	tg.setScript(func(c call) error {
		if storm < 8 {
			storm++
			return errTooMany(5 + storm)
		}
		return nil
	})
	tg.hold()
	progress := o.Send(bg, key, Low, Content{Text: "progress 0"}, SendOptions{})
	waitFor(t, "progress send in flight", func() bool { return tg.Started() == 1 })
	var last *Pending
	for i := 1; i <= 100; i++ {
		last = o.Edit(bg, progress, Low, Content{Text: fmt.Sprintf("progress %d", i)})
	}
	final := o.Send(bg, key, High, Content{Text: "final answer"}, SendOptions{})
	tg.release()

	_, err := await(t, final.Sent())
	require.NoError(t, err)
	res, err := await(t, last)
	require.NoError(t, err)
	assert.Equal(t, OutcomeEdited, res.Outcome)

	calls := tg.Calls()
	assertRespects429(t, calls)
	var ok []string
	for _, c := range calls {
		if c.Err == nil {
			ok = append(ok, c.Method+":"+c.Text)
		}
	}
	assert.Equal(t, []string{"sendMessage:final answer", "sendMessage:progress 0", "editMessageText:progress 100"}, ok)
	assert.Equal(t, uint64(8), o.Stats().RateLimited)
	assert.Equal(t, uint64(99), o.Stats().Coalesced)
}

func TestTransportErrorsRetryWithBackoff(t *testing.T) {
	clock := newAutoClock()
	o, tg := newTestOutbox(t, clock, Options{})
	failures := []error{errTransport("sendMessage"), err5xx("sendMessage"), errTransport("sendMessage"), err5xx("sendMessage")}
	n := 0
	tg.setScript(func(c call) error {
		if n < len(failures) {
			n++
			return failures[n-1]
		}
		return nil
	})
	m := o.Send(bg, ChatKey{Chat: 13}, High, Content{Text: "x"}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)
	calls := tg.Calls()
	require.Len(t, calls, 5)
	for i, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second} {
		gap := calls[i+1].At.Sub(calls[i].At)
		assert.GreaterOrEqual(t, gap, want, "gap after failure %d", i+1)
	}
	assert.Equal(t, uint64(4), o.Stats().Retries)
}

func TestBackoffIsCapped(t *testing.T) {
	o := New(newFakeTG(newAutoClock()), Options{Jitter: noJitter})
	defer o.Close(bg)
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, o.backoff(i+1, DefaultBackoffMax), "failure %d", i+1)
		assert.Equal(t, min(w, DefaultHighBackoffMax), o.backoff(i+1, DefaultHighBackoffMax), "high priority, failure %d", i+1)
	}
	assert.Equal(t, 30*time.Second, o.backoff(1000, DefaultBackoffMax))
	assert.Equal(t, 5*time.Second, o.backoff(1000, DefaultHighBackoffMax))
}

func TestUnavailableChatFailsFastAndStopsCalling(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		check func(t *testing.T, err error)
	}{
		{"bot blocked (403)", errForbidden(), func(t *testing.T, err error) {
			var be *BlockedError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, int64(66), be.Chat)
			assert.ErrorIs(t, err, bot.ErrorForbidden)
		}},
		{"group migrated", errMigrated(-100999), func(t *testing.T, err error) {
			var me *MigratedError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, int64(-100999), me.NewChat)
			var lib *bot.MigrateError
			assert.ErrorAs(t, err, &lib)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A manual clock: the cooldown must not pass by itself.
			o, tg := newTestOutbox(t, newManualClock(), Options{})
			key := ChatKey{Chat: 66}
			tg.setScript(func(c call) error { return tt.err })
			tg.hold()
			first := o.Send(bg, key, High, Content{Text: "a"}, SendOptions{})
			waitFor(t, "first call in flight", func() bool { return tg.Started() == 1 })
			queued := []*Pending{
				o.Send(bg, key, High, Content{Text: "b"}, SendOptions{}).Sent(),
				o.Edit(bg, first, Low, Content{Text: "a2"}),
			}
			tg.release()
			for _, p := range append([]*Pending{first.Sent()}, queued...) {
				_, err := await(t, p)
				tt.check(t, err)
			}
			_, err := await(t, o.Send(bg, key, High, Content{Text: "c"}, SendOptions{}).Sent())
			tt.check(t, err)
			assert.Len(t, tg.Calls(), 1, "one refusal is enough")

			tg.setScript(nil)
			o.Unblock(66)
			_, err = await(t, o.Send(bg, key, High, Content{Text: "d"}, SendOptions{}).Sent())
			require.NoError(t, err)
		})
	}
}

func TestOpsOnUnsentMessageFail(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	tg.setScript(func(c call) error { return errBadRequest("Bad Request: chat not found") })
	tg.hold()
	m := o.Send(bg, ChatKey{Chat: 14}, High, Content{Text: "a"}, SendOptions{})
	waitFor(t, "send in flight", func() bool { return tg.Started() == 1 })
	queuedEdit := o.Edit(bg, m, Low, Content{Text: "b"})
	tg.release()

	_, err := await(t, m.Sent())
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	for _, p := range []*Pending{queuedEdit, o.Edit(bg, m, Low, Content{Text: "c"}), o.Delete(bg, m, High)} {
		_, err := await(t, p)
		var ue *UnsentError
		require.ErrorAs(t, err, &ue)
		assert.ErrorIs(t, err, bot.ErrorBadRequest)
	}
	assert.Len(t, tg.Calls(), 1)
}

func TestDeleteDropsPendingEdits(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 15}
	m := o.Send(bg, key, Low, Content{Text: "x"}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)

	tg.hold()
	blocker := o.Send(bg, key, High, Content{Text: "blocker"}, SendOptions{}) // holds the worker
	waitFor(t, "blocker in flight", func() bool { return tg.Started() == 2 })
	edit := o.Edit(bg, m, Low, Content{Text: "y"})
	del := o.Delete(bg, m, High)
	_, err = await(t, o.Edit(bg, m, Low, Content{Text: "z"}))
	require.ErrorIs(t, err, ErrDeleted)
	tg.release()

	res, err := await(t, edit)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome)
	res, err = await(t, del)
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)
	_, err = await(t, blocker.Sent())
	require.NoError(t, err)
	calls := tg.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, "deleteMessage", calls[2].Method)
	assert.Equal(t, int(m.ID()), calls[2].MessageID)

	res, err = await(t, o.Delete(bg, m, High))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)

	// A message Telegram no longer has counts as deleted.
	res, err = await(t, o.Delete(bg, o.Adopt(key, 12345), Low))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)
}

func TestTypingIsThrottledAndYieldsToMessages(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	key := ChatKey{Chat: 16, Thread: 3}

	res, err := await(t, o.Typing(bg, key))
	require.NoError(t, err)
	assert.Equal(t, OutcomeSent, res.Outcome)
	calls := tg.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, call{Method: "sendChatAction", Chat: 16, Thread: 3, Text: "typing", At: calls[0].At, StartSeq: 1, DoneSeq: 2}, calls[0])

	res, err = await(t, o.Typing(bg, key))
	require.NoError(t, err)
	assert.Equal(t, OutcomeSkipped, res.Outcome, "one per interval")

	clock.Advance(DefaultTypingInterval)
	tg.hold()
	send := o.Send(bg, key, Low, Content{Text: "msg"}, SendOptions{})
	waitFor(t, "send in flight", func() bool { return tg.Started() == 2 })
	typing := o.Typing(bg, key) // requested after the message: still useful
	tg.release()
	_, err = await(t, send.Sent())
	require.NoError(t, err)
	res, err = await(t, typing)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSent, res.Outcome)
	calls = tg.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"sendChatAction", "sendMessage", "sendChatAction"},
		[]string{calls[0].Method, calls[1].Method, calls[2].Method})

	// A typing request that waited longer than the interval is stale.
	clock.Advance(DefaultTypingInterval)
	tg.hold()
	blocker := o.Send(bg, key, Low, Content{Text: "slow"}, SendOptions{})
	waitFor(t, "blocker in flight", func() bool { return tg.Started() == 4 })
	stale := o.Typing(bg, key)
	clock.Advance(DefaultTypingInterval + time.Second)
	tg.release()
	_, err = await(t, blocker.Sent())
	require.NoError(t, err)
	res, err = await(t, stale)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSkipped, res.Outcome)
	assert.Len(t, tg.Calls(), 4)
}

func TestPerChatPacing(t *testing.T) {
	tests := []struct {
		name     string
		chat     int64
		burst    int
		interval time.Duration
	}{
		{"private chat", 21, DefaultPrivateBurst, DefaultPrivateInterval},
		{"group", -21, DefaultGroupBurst, DefaultGroupInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, tg := newTestOutbox(t, newAutoClock(), Options{})
			key := ChatKey{Chat: tt.chat}
			m := o.Send(bg, key, High, Content{Text: "m"}, SendOptions{})
			var last *Pending
			for i := 0; i < 8; i++ {
				if i%2 == 0 {
					last = o.Send(bg, key, High, Content{Text: fmt.Sprint(i)}, SendOptions{}).Sent()
				} else {
					last = o.Edit(bg, m, High, Content{Text: fmt.Sprint(i)})
				}
				_, err := await(t, last) // one at a time so nothing coalesces
				require.NoError(t, err)
			}
			calls := tg.Calls()
			require.Len(t, calls, 9)
			// Sends and edits share one budget.
			assertTokenBucket(t, calls, tt.burst, tt.interval)
		})
	}
}

// assertTokenBucket checks the defining property of a token bucket with the
// given burst and refill interval: any n calls span at least
// (n-burst)·interval.
func assertTokenBucket(t *testing.T, calls []call, burst int, interval time.Duration) {
	t.Helper()
	for i := range calls {
		for j := i + burst; j < len(calls); j++ {
			need := time.Duration(j-i+1-burst) * interval
			if span := calls[j].At.Sub(calls[i].At); span < need {
				t.Errorf("calls %d..%d span %v, token bucket needs %v", i, j, span, need)
				return
			}
		}
	}
}

func TestGlobalPacingAcrossChats(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	const chats = 60
	t0 := clock.Now()
	sent := make([]*Message, chats)
	for i := range sent {
		sent[i] = o.Send(bg, ChatKey{Chat: int64(1000 + i)}, High, Content{Text: "x"}, SendOptions{})
	}
	half := o.gate.smoothFrom(High)
	// Advance the clock only once every granted call was made, so each is
	// recorded at the time it was granted; the check and the advance hold
	// the gate's lock, so no grant slips in between.
	for len(tg.Calls()) < chats {
		waitFor(t, "the granted calls and the gate's next wait", func() bool {
			o.gate.mu.Lock()
			defer o.gate.mu.Unlock()
			if len(tg.Calls()) != o.gate.granted {
				return false
			}
			if o.gate.granted == chats {
				return true
			}
			until := o.gate.sleepUntil
			if until.IsZero() || !clock.hasWaiterAt(until) {
				return false
			}
			clock.Advance(until.Sub(clock.Now()))
			return true
		})
	}
	for _, m := range sent {
		_, err := await(t, m.Sent())
		require.NoError(t, err)
	}
	calls := tg.Calls()
	require.Len(t, calls, chats)
	slices.SortStableFunc(calls, func(a, b call) int { return a.At.Compare(b.At) }) // several may finish in one step
	perSecond := float64(DefaultGlobalRate)
	every := time.Duration(float64(time.Second) / perSecond)
	span := time.Duration(DefaultGlobalBurst) * every
	for i := 0; i+DefaultGlobalBurst < len(calls); i++ {
		assert.GreaterOrEqual(t, calls[i+DefaultGlobalBurst].At.Sub(calls[i].At), span,
			"calls %d and %d are in one window", i, i+DefaultGlobalBurst)
	}
	assert.Equal(t, t0, calls[half-1].At, "nearly a window's worth of answers goes out at once")
	for i := half; i < DefaultGlobalBurst; i++ {
		assert.GreaterOrEqual(t, calls[i].At.Sub(t0), time.Duration(i-half+1)*every, "then calls are spread evenly (call %d)", i)
	}
	assert.Equal(t, every, calls[half].At.Sub(t0), "and no slower than that")
}

func TestJournalReplayAfterCrash(t *testing.T) {
	j := newMemJournal()
	o1, tg1 := newTestOutbox(t, newAutoClock(), Options{Journal: j})
	tg1.setScript(func(c call) error { return errTransport("sendMessage") }) // Telegram unreachable
	key := ChatKey{Chat: -100, Thread: 4}
	kb := approveKeyboard("7")
	o1.Send(bg, key, High, Content{Text: "final A", Keyboard: kb}, SendOptions{ReplyTo: 3, Silent: true, Tag: "final:1"})
	o1.Send(bg, key, High, Content{Text: "final B"}, SendOptions{Tag: "final:2"})
	o1.Send(bg, key, Low, Content{Text: "progress"}, SendOptions{}) // low: not journaled
	waitFor(t, "retries", func() bool { return o1.Stats().Retries >= 2 })

	crash, cancel := context.WithCancel(bg)
	cancel() // no time to drain
	err := o1.Close(crash)
	var ue *UnflushedError
	require.ErrorAs(t, err, &ue)
	require.Len(t, ue.Ops, 3)
	assert.Equal(t, UnflushedOp{Key: key, Kind: "send", Priority: High, Tag: "final:1", Journal: 1}, ue.Ops[0])

	pending := j.Pending()
	require.Len(t, pending, 2)
	assert.Equal(t, KindSend, pending[0].Kind)
	assert.Equal(t, key, pending[0].Key)

	o2, tg2 := newTestOutbox(t, newAutoClock(), Options{Journal: j})
	bad := JournalEntry{ID: 99, Key: key, Kind: "edit", Payload: []byte(`{}`)}
	msgs, err := o2.Restore(bg, append(pending, bad))
	require.ErrorContains(t, err, "journal entry 99")
	require.Len(t, msgs, 3)
	assert.Nil(t, msgs[2])
	for i, tag := range []string{"final:1", "final:2"} {
		assert.Equal(t, tag, msgs[i].Tag())
		res, err := await(t, msgs[i].Sent())
		require.NoError(t, err)
		assert.Equal(t, res.MessageID, msgs[i].ID())
	}
	calls := tg2.Calls()
	require.Len(t, calls, 2)
	kbJSON, _ := json.Marshal(kb)
	assert.Equal(t, call{
		Method: "sendMessage", Chat: -100, Thread: 4, MessageID: 1, Text: "final A", ParseMode: models.ParseModeHTML,
		Markup: string(kbJSON), ReplyTo: 3, ReplyLax: true, Silent: true, NoPreview: true, At: calls[0].At, StartSeq: 1, DoneSeq: 2,
	}, calls[0])
	assert.Equal(t, "final B", calls[1].Text)
	assert.Empty(t, j.Pending(), "delivered entries are marked done")
}

func TestJournalDoneAfterPermanentFailureOnly(t *testing.T) {
	j := newMemJournal()
	o, tg := newTestOutbox(t, newAutoClock(), Options{Journal: j})
	tg.setScript(func(c call) error {
		if c.Text == "bad" {
			return errBadRequest("Bad Request: chat not found")
		}
		return nil
	})
	_, err := await(t, o.Send(bg, ChatKey{Chat: 17}, High, Content{Text: "bad"}, SendOptions{}).Sent())
	require.Error(t, err)
	_, err = await(t, o.Send(bg, ChatKey{Chat: 17}, High, Content{Text: "good"}, SendOptions{}).Sent())
	require.NoError(t, err)
	assert.Empty(t, j.Pending(), "done before the caller learns the outcome")
	j.mu.Lock()
	assert.Equal(t, []JournalID{1, 2}, j.done, "replaying a refused send would only repeat the refusal")
	j.mu.Unlock()
}

func TestCloseDrainsEverything(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	var pending []*Pending
	tg.hold() // nothing completes before everything is queued
	for chat := int64(1); chat <= 5; chat++ {
		key := ChatKey{Chat: chat * 31}
		m := o.Send(bg, key, Low, Content{Text: "progress"}, SendOptions{})
		for i := 0; i < 4; i++ {
			pending = append(pending, o.Edit(bg, m, Low, Content{Text: fmt.Sprint("p", i)}))
			pending = append(pending, o.Send(bg, key, High, Content{Text: fmt.Sprint("h", i)}, SendOptions{}).Sent())
		}
		pending = append(pending, o.Typing(bg, key))
	}
	tg.release()
	require.NoError(t, o.Close(bg))
	for _, p := range pending {
		_, err, ok := p.Peek()
		require.True(t, ok, "everything is resolved when Close returns")
		require.NoError(t, err)
	}
	latest := 0
	for _, c := range tg.Calls() {
		switch c.Text {
		case "p0", "p1", "p2":
			// The send may go out with what was the latest when it did.
			assert.Equal(t, "sendMessage", c.Method, "an edit with a superseded progress %q", c.Text)
		case "p3": // an edit, or the send itself if it was still queued
			latest++
		}
	}
	assert.Equal(t, 5, latest, "coalesced to the latest progress")
	assert.Equal(t, 0, o.Stats().ActiveChats)

	_, err := await(t, o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "late"}, SendOptions{}).Sent())
	require.ErrorIs(t, err, ErrClosed)
	_, err = await(t, o.Typing(bg, ChatKey{Chat: 1}))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, o.Close(bg), ErrClosed)
}

func TestCloseDeadlineReportsUnflushed(t *testing.T) {
	clock := newManualClock()
	j := newMemJournal()
	o, tg := newTestOutbox(t, clock, Options{Journal: j})
	tg.setScript(func(c call) error { return errTooMany(60) })
	key := ChatKey{Chat: 18}
	t0 := clock.Now()
	m := o.Send(bg, key, High, Content{Text: "final"}, SendOptions{Tag: "final:9"})
	waitFor(t, "paused by 429", func() bool { return clock.hasWaiterAt(t0.Add(60 * time.Second)) })

	ctx, cancel := context.WithCancel(bg)
	errc := make(chan error, 1)
	go func() { errc <- o.Close(ctx) }()
	cancel() // the deadline comes before the pause ends
	err := <-errc
	var ue *UnflushedError
	require.ErrorAs(t, err, &ue)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []UnflushedOp{{Key: key, Kind: "send", Priority: High, Tag: "final:9", Journal: 1}}, ue.Ops)
	_, err = await(t, m.Sent())
	require.ErrorIs(t, err, ErrClosed)
	assert.Len(t, j.Pending(), 1, "kept for replay")
	assert.Len(t, tg.Calls(), 1)
}

func TestManyChatsConcurrentlyKeepPerChatOrder(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	const chats, perChat = 50, 20
	var wg sync.WaitGroup
	progress := make([]*Message, chats)
	for c := 0; c < chats; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := int64(c + 1)
			if c%2 == 1 {
				id = -id // groups pace differently
			}
			key := ChatKey{Chat: id}
			progress[c] = o.Send(bg, key, Low, Content{Text: "p0"}, SendOptions{})
			var ps []*Pending
			for i := 0; i < perChat; i++ {
				ps = append(ps, o.Send(bg, key, High, Content{Text: fmt.Sprintf("c%d m%02d", c, i)}, SendOptions{}).Sent())
				ps = append(ps, o.Edit(bg, progress[c], Low, Content{Text: fmt.Sprintf("p%d", i+1)}))
				o.Typing(bg, key)
			}
			for _, p := range ps {
				_, err := await(t, p)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()

	perChatTexts := map[int64][]string{}
	for _, c := range tg.Calls() {
		if c.Method == "sendMessage" && strings.Contains(c.Text, " m") {
			perChatTexts[c.Chat] = append(perChatTexts[c.Chat], c.Text)
		}
	}
	require.Len(t, perChatTexts, chats)
	for c := 0; c < chats; c++ {
		id := int64(c + 1)
		if c%2 == 1 {
			id = -id
		}
		want := make([]string, perChat)
		for i := range want {
			want[i] = fmt.Sprintf("c%d m%02d", c, i)
		}
		assert.Equal(t, want, perChatTexts[id], "chat %d", id)
		tg.mu.Lock()
		assert.Equal(t, fmt.Sprintf("p%d", perChat), tg.msgs[id][int(progress[c].ID())].text)
		tg.mu.Unlock()
	}
	waitFor(t, "idle workers to retire", func() bool { return o.Stats().ActiveChats == 0 })
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		want  class
		after time.Duration
	}{
		{"429", errTooMany(7), classRateLimited, 7 * time.Second},
		{"429 wrapped", fmt.Errorf("edit: %w", errTooMany(3)), classRateLimited, 3 * time.Second},
		{"not modified", errBadRequest(descNotModified), classNotModified, 0},
		{"edit target gone", errBadRequest(descEditGone), classGone, 0},
		{"cannot edit", errBadRequest("Bad Request: message can't be edited"), classGone, 0},
		{"delete target gone", errBadRequest(descDeleteGone), classGone, 0},
		{"parse", errBadRequest(`Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`), classParse, 0},
		{"too long", errBadRequest(descTooLong), classTooLong, 0},
		{"other 400", errBadRequest("Bad Request: chat not found"), classPermanent, 0},
		{"403", errForbidden(), classForbidden, 0},
		{"migrated", errMigrated(-1001), classMigrated, 0},
		{"401", fmt.Errorf("%w, %s", bot.ErrorUnauthorized, "Unauthorized"), classPermanent, 0},
		{"transport", errTransport("sendMessage"), classTransient, 0},
		{"5xx", err5xx("editMessageText"), classTransient, 0},
		{"call timeout", fmt.Errorf("error do request for method sendMessage, %w", context.DeadlineExceeded), classTransient, 0},
		{"no message id", errNoMessageID, classPermanent, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, after := classify(tt.err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.after, after)
		})
	}
}

func TestRetriedEditIsSupersededByNewerOne(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 19}
	m := o.Send(bg, key, Low, Content{Text: "zero"}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)

	failed := false
	tg.setScript(func(c call) error {
		if c.Method == "editMessageText" && !failed {
			failed = true
			return err5xx("editMessageText")
		}
		return nil
	})
	tg.hold()
	one := o.Edit(bg, m, Low, Content{Text: "one"})
	waitFor(t, "edit in flight", func() bool { return tg.Started() == 2 })
	two := o.Edit(bg, m, Low, Content{Text: "two"}) // arrives while "one" is in flight
	tg.release()

	res, err := await(t, one)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome, "the retry of an outdated edit is pointless")
	res, err = await(t, two)
	require.NoError(t, err)
	assert.Equal(t, OutcomeEdited, res.Outcome)
	calls := tg.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"zero", "one", "two"}, []string{calls[0].Text, calls[1].Text, calls[2].Text})
}

func TestReplacementCarriesOverToNewerEdit(t *testing.T) {
	var replacedCount atomic.Int32
	o, tg := newTestOutbox(t, newAutoClock(), Options{OnReplaced: func(*Message, MessageID, MessageID) { replacedCount.Add(1) }})
	m := o.Adopt(ChatKey{Chat: 20}, 999)
	tg.hold()
	one := o.Edit(bg, m, Low, Content{Text: "one"})
	waitFor(t, "edit in flight", func() bool { return tg.Started() == 1 })
	two := o.Edit(bg, m, Low, Content{Text: "two"})
	tg.release()

	res, err := await(t, one)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome)
	res, err = await(t, two)
	require.NoError(t, err)
	assert.Equal(t, OutcomeReplaced, res.Outcome)
	calls := tg.Calls()
	require.Len(t, calls, 2, "one replacement message, with the latest content")
	assert.Equal(t, "sendMessage", calls[1].Method)
	assert.Equal(t, "two", calls[1].Text)
	assert.Equal(t, int32(1), replacedCount.Load())
}

func TestDeleteWhileReplacementPending(t *testing.T) {
	clock := newManualClock()
	// A burst of 3 lets the edit and its replacement go without waiting for
	// a refill (the token kept for high ops included), so the only wait on
	// the manual clock is the 429 pause this test is about.
	o, tg := newTestOutbox(t, clock, Options{PrivateBurst: 3})
	tg.setScript(func(c call) error {
		if c.Method == "sendMessage" {
			return errTooMany(10) // the replacement send is held back
		}
		return nil
	})
	t0 := clock.Now()
	m := o.Adopt(ChatKey{Chat: 21}, 999)
	edit := o.Edit(bg, m, Low, Content{Text: "x"})
	waitFor(t, "replacement paused", func() bool { return clock.hasWaiterAt(t0.Add(10 * time.Second)) })

	res, err := await(t, o.Delete(bg, m, High))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome, "the original is gone and the replacement is dropped")
	res, err = await(t, edit)
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, res.Outcome)
	clock.Advance(time.Minute)
	assert.Len(t, tg.Calls(), 2, "edit attempt and one rate-limited send; no retry after the delete")
}

func TestLogsCarryChatFieldsButNeverText(t *testing.T) {
	var buf syncBuffer
	logger := zerolog.New(&buf).Level(zerolog.DebugLevel)
	o, tg := newTestOutbox(t, newAutoClock(), Options{Logger: &logger})
	hit := false
	tg.setScript(func(c call) error {
		if !hit {
			hit = true
			return errTooMany(1)
		}
		return nil
	})
	ctxLog := logger.With().Str("session", "s-1").Logger()
	ctx := ctxLog.WithContext(bg)
	m := o.Send(ctx, ChatKey{Chat: 22, Thread: 5}, High, Content{Text: "SECRET-TEXT"}, SendOptions{})
	_, err := await(t, m.Sent())
	require.NoError(t, err)

	out := buf.String()
	assert.Contains(t, out, `"chat_id":22`)
	assert.Contains(t, out, `"thread_id":5`)
	assert.Contains(t, out, `"session":"s-1"`, "the caller's context logger is used")
	assert.Contains(t, out, "Telegram rate limit")
	assert.NotContains(t, out, "SECRET-TEXT")
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTypingGivesWayUnderGlobalLoad(t *testing.T) {
	clock := newManualClock() // no refill during the test
	// 4 per second: other chats used 3 of them.
	o, tg := newTestOutbox(t, clock, Options{GlobalBurst: 4, GlobalRate: 4})
	useGlobalBudget(o, 3)
	// One global slot is left: it belongs to messages, not to typing.
	res, err := await(t, o.Typing(bg, ChatKey{Chat: 9}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeSkipped, res.Outcome)
	advanceGate(o, clock, 250*time.Millisecond) // the even spread, not a refill
	_, err = await(t, o.Send(bg, ChatKey{Chat: 9}, High, Content{Text: "y"}, SendOptions{}).Sent())
	require.NoError(t, err)
	for _, c := range tg.Calls() {
		assert.Equal(t, "sendMessage", c.Method)
	}
}

func TestLowOpsLeaveASlotForHighOps(t *testing.T) {
	clock := newManualClock()
	// 2 calls per 2.1 s: an edit may use one slot, the other is kept.
	o, tg := newTestOutbox(t, clock, Options{PrivateBurst: 2})
	key := ChatKey{Chat: 30}
	tg.seed(30, 10, "progress 0")
	progress := o.Adopt(key, 10)
	t0 := clock.Now()
	// The second edit is queued while the first is in flight, so the worker
	// meets it right after spending one of its two tokens.
	tg.hold()
	first := o.Edit(bg, progress, Low, Content{Text: "progress 1"})
	waitFor(t, "first edit in flight", func() bool { return tg.Started() == 1 })
	second := o.Edit(bg, progress, Low, Content{Text: "progress 2"})
	tg.release()
	_, err := await(t, first)
	require.NoError(t, err)
	waitFor(t, "second edit waits for a refill (or is sent)", func() bool {
		return clock.hasWaiterAt(t0.Add(2*DefaultPrivateInterval+time.Millisecond)) || len(tg.Calls()) >= 2
	})
	require.Len(t, tg.Calls(), 1, "a low op does not take the token kept for high ops")
	// A final answer arriving now goes out at once, with the kept token.
	answer := o.Send(bg, key, High, Content{Text: "the answer"}, SendOptions{})
	_, err = await(t, answer.Sent())
	require.NoError(t, err)
	calls := tg.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "the answer", calls[1].Text, "the answer did not wait behind the edit")
	assert.Equal(t, t0, calls[1].At, "and was sent without waiting for a refill")
	clock.Advance(3 * time.Second)
	_, err = await(t, second)
	require.NoError(t, err)
}

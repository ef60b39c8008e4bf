package outbox

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// methods lists the Telegram methods of calls, in order.
func methods(calls []call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Method
	}
	return out
}

// TestNoReplaceEditOfVanishedMessageIsGone: an edit of a NoReplace handle
// whose message the user deleted sends nothing new: it resolves with
// OutcomeGone (and the id the message had), OnReplaced is not called, and
// later edits and a delete of it make no call. A handle without the
// opt-in, in the same chat, is still replaced by a new message.
func TestNoReplaceEditOfVanishedMessageIsGone(t *testing.T) {
	var replaced atomic.Int32
	o, tg := newTestOutbox(t, newAutoClock(), Options{OnReplaced: func(*Message, MessageID, MessageID) { replaced.Add(1) }})
	key := ChatKey{Chat: -310, Thread: 2}
	panel := o.Adopt(key, 999).NoReplace() // the user deleted it while we were down

	res, err := await(t, o.Edit(bg, panel, Low, Content{Text: "<b>panel</b>", Keyboard: approveKeyboard("p")}))
	require.NoError(t, err)
	assert.Equal(t, Result{MessageID: 999, Outcome: OutcomeGone}, res)
	assert.Equal(t, []string{"editMessageText"}, methods(tg.Calls()), "nothing is sent in its place")
	assert.Zero(t, replaced.Load())

	res, err = await(t, o.Edit(bg, panel, High, Content{Text: "later"}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeGone, res.Outcome, "a gone message stays gone")
	res, err = await(t, o.Delete(bg, panel, High))
	require.NoError(t, err)
	assert.Equal(t, OutcomeDeleted, res.Outcome)
	assert.Len(t, tg.Calls(), 1, "neither made a call")

	answer := o.Adopt(key, 998) // gone as well, but without the opt-in
	res, err = await(t, o.Edit(bg, answer, High, Content{Text: "<b>final</b>"}))
	require.NoError(t, err)
	assert.Equal(t, OutcomeReplaced, res.Outcome)
	calls := tg.Calls()
	assert.Equal(t, []string{"editMessageText", "editMessageText", "sendMessage"}, methods(calls))
	assert.Equal(t, "<b>final</b>", calls[2].Text)
	assert.Equal(t, int32(1), replaced.Load())
}

// TestNoReplaceEditQueuedBehindTheGoneOne: an edit queued while the one
// that finds the message gone is in flight resolves with OutcomeGone too,
// without a call: whoever waits on either learns that the message is no
// more.
func TestNoReplaceEditQueuedBehindTheGoneOne(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 22}
	m := o.Send(bg, key, Low, Content{Text: "panel"}, SendOptions{Silent: true}).NoReplace()
	sent, err := await(t, m.Sent())
	require.NoError(t, err)
	tg.userDeletes(key.Chat, int(sent.MessageID))

	tg.hold()
	one := o.Edit(bg, m, Low, Content{Text: "one"})
	waitFor(t, "the edit in flight", func() bool { return tg.Started() == 2 })
	two := o.Edit(bg, m, Low, Content{Text: "two"})
	tg.release()

	for _, p := range []*Pending{one, two} {
		res, err := await(t, p)
		require.NoError(t, err)
		assert.Equal(t, Result{MessageID: sent.MessageID, Outcome: OutcomeGone}, res)
	}
	assert.Equal(t, []string{"sendMessage", "editMessageText"}, methods(tg.Calls()))
	assert.Zero(t, o.Stats().Replaced)
}

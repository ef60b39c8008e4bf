package outbox

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// draftTG is fakeTG with sendMessageDraft: private chats only (400
// TEXTDRAFT_PEER_INVALID elsewhere, as Telegram answers), non-empty text.
// Draft calls are recorded with the other calls, so their order against
// sendMessage shows; MessageID holds the draft id.
type draftTG struct {
	*fakeTG
	dmu      sync.Mutex
	dgate    chan struct{} // when set, draft calls block until it is closed
	dstarted int
}

func (f *draftTG) SendMessageDraft(ctx context.Context, p *bot.SendMessageDraftParams) (bool, error) {
	f.dmu.Lock()
	f.dstarted++
	gate := f.dgate
	f.dmu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return false, errors.Join(errors.New("error do request for method sendMessageDraft"), ctx.Err())
		}
	}
	chat := p.ChatID.(int64)
	id, _ := strconv.Atoi(p.DraftID)
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.finish(call{Method: "sendMessageDraft", Chat: chat, Thread: p.MessageThreadID, MessageID: id, Text: p.Text, ParseMode: p.ParseMode},
		func() error {
			switch {
			case chat < 0:
				return errBadRequest("Bad Request: TEXTDRAFT_PEER_INVALID")
			case strings.TrimSpace(p.Text) == "":
				return errBadRequest("Bad Request: text must be non-empty")
			case p.ParseMode == models.ParseModeHTML && !htmlOK(p.Text):
				return errBadRequest(`Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`)
			}
			return nil
		})
	return err == nil, err
}

func (f *draftTG) holdDrafts() {
	f.dmu.Lock()
	f.dgate = make(chan struct{})
	f.dmu.Unlock()
}

func (f *draftTG) releaseDrafts() {
	f.dmu.Lock()
	if f.dgate != nil {
		close(f.dgate)
		f.dgate = nil
	}
	f.dmu.Unlock()
}

func (f *draftTG) draftsStarted() int {
	f.dmu.Lock()
	defer f.dmu.Unlock()
	return f.dstarted
}

func (f *draftTG) draftCalls() []call {
	var out []call
	for _, c := range f.Calls() {
		if c.Method == "sendMessageDraft" {
			out = append(out, c)
		}
	}
	return out
}

func newDraftOutbox(t *testing.T, clock *fakeClock) (*Outbox, *draftTG) {
	t.Helper()
	tg := &draftTG{fakeTG: newFakeTG(clock)}
	o := New(tg, Options{Clock: clock, Jitter: noJitter})
	t.Cleanup(func() {
		tg.releaseDrafts()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = o.Close(ctx)
	})
	return o, tg
}

// waitTimer waits until something waits on the clock for exactly at.
func waitTimer(t *testing.T, clock *fakeClock, what string, at time.Time) {
	t.Helper()
	waitFor(t, what, func() bool { return clock.hasWaiterAt(at) })
}

func TestDraftLatestWinsAndIsPaced(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	t0 := clock.Now()
	d := o.Draft(bg, ChatKey{Chat: 7}, strings.ToUpper)
	d.Show("hello")
	waitTimer(t, clock, "the first call held", t0.Add(DefaultDraftHold))
	clock.Advance(DefaultDraftHold)
	waitFor(t, "first draft", func() bool { return len(tg.draftCalls()) == 1 })
	first := tg.draftCalls()[0]
	assert.Equal(t, "HELLO", first.Text, "formatted when sent")
	assert.Equal(t, models.ParseModeHTML, first.ParseMode)
	assert.NotZero(t, first.MessageID, "a non-zero draft id")
	assert.Less(t, first.MessageID, 1<<31)

	d.Show("hello wor")
	d.Show("hello world")
	next := first.At.Add(DefaultDraftInterval)
	waitTimer(t, clock, "paced", next)
	assert.Len(t, tg.draftCalls(), 1, "nothing before the interval")
	clock.Advance(next.Sub(clock.Now()))
	waitFor(t, "second draft", func() bool { return len(tg.draftCalls()) == 2 })
	second := tg.draftCalls()[1]
	assert.Equal(t, "HELLO WORLD", second.Text, "the latest text wins")
	assert.Equal(t, first.MessageID, second.MessageID, "one draft id per reply")
	assert.True(t, d.Shown())

	d.Show("hello world") // unchanged: no call
	d.End()
	d.Show("after the end")
	e := o.Draft(bg, ChatKey{Chat: 7}, nil)
	assert.NotEqual(t, strconv.Itoa(first.MessageID), e.id, "the next reply gets its own id")
	e.End()
	assert.Len(t, tg.draftCalls(), 2)
	assert.Empty(t, tg.callsTo(7)[2:], "no call after End")
}

func TestDraftEndedWithinHoldCostsNothing(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	d := o.Draft(bg, ChatKey{Chat: 7}, nil)
	d.Show("Sure.")
	waitTimer(t, clock, "held", clock.Now().Add(DefaultDraftHold))
	d.End()
	_, err := await(t, o.Send(bg, ChatKey{Chat: 7}, High, Content{Text: "Sure."}, SendOptions{}).Sent())
	require.NoError(t, err)
	clock.Advance(time.Second)
	assert.Empty(t, tg.draftCalls(), "a quick answer is not drafted first")
	assert.False(t, d.Shown())
}

func TestDraftRefusedOutsidePrivateChats(t *testing.T) {
	clock := newAutoClock()
	o, tg := newDraftOutbox(t, clock)
	group := ChatKey{Chat: -100}
	d := o.Draft(bg, group, nil)
	d.Show("words")
	waitFor(t, "refused", func() bool { return d.Refused() != nil })
	require.ErrorIs(t, d.Refused(), bot.ErrorBadRequest)
	assert.Contains(t, d.Refused().Error(), "TEXTDRAFT_PEER_INVALID")
	require.Error(t, o.DraftsRefused(group.Chat), "remembered for the chat")
	d.Show("more words")
	again := o.Draft(bg, group, nil)
	require.Error(t, again.Refused(), "the chat is not asked again")
	again.Show("words")
	d.End()
	again.End()
	assert.Len(t, tg.draftCalls(), 1)
	assert.NoError(t, o.DraftsRefused(7), "other chats are not affected")
}

func TestDraftsNeedAnAPIThatHasThem(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	d := o.Draft(bg, ChatKey{Chat: 7}, nil)
	require.ErrorIs(t, d.Refused(), ErrDraftsUnsupported)
	d.Show("words")
	d.End()
	assert.Empty(t, tg.Calls())
}

func TestDraft429PausesOnlyDrafts(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	key := ChatKey{Chat: 7}
	tg.setScript(func(c call) error {
		if c.Method == "sendMessageDraft" && c.Text == "one" {
			return errTooMany(3)
		}
		return nil
	})
	t0 := clock.Now()
	d := o.Draft(bg, key, nil)
	d.Show("one")
	waitTimer(t, clock, "held", t0.Add(DefaultDraftHold))
	clock.Advance(DefaultDraftHold)
	waitFor(t, "429", func() bool { return len(tg.draftCalls()) == 1 })
	d.Show("one two")
	waitTimer(t, clock, "drafts paused for retry_after", t0.Add(DefaultDraftHold+3*time.Second))

	_, err := await(t, o.Send(bg, key, High, Content{Text: "answer"}, SendOptions{}).Sent())
	require.NoError(t, err, "messages are not paused by a draft's 429")

	clock.Advance(3 * time.Second)
	waitFor(t, "retried with the latest text", func() bool { return len(tg.draftCalls()) == 2 })
	assert.Equal(t, "one two", tg.draftCalls()[1].Text)
	assert.Equal(t, t0.Add(DefaultDraftHold+3*time.Second), tg.draftCalls()[1].At)
	d.End()
}

func TestDraftParseErrorFallsBackToPlainText(t *testing.T) {
	o, tg := newDraftOutbox(t, newAutoClock())
	d := o.Draft(bg, ChatKey{Chat: 7}, func(s string) string { return "<tg-spoiler>" + s + "</tg-spoiler>" })
	d.Show("a &amp; b")
	waitFor(t, "plain retry", func() bool { return len(tg.draftCalls()) == 2 })
	calls := tg.draftCalls()
	require.Error(t, calls[0].Err)
	assert.Equal(t, "a & b", calls[1].Text)
	assert.Empty(t, string(calls[1].ParseMode))
	require.NoError(t, calls[1].Err)
	assert.NoError(t, d.Refused())
	d.End()
}

// The answer must not be overtaken by the last draft of the reply it
// replaces: a draft arriving after it would show again below it.
func TestAnswerWaitsForTheEndedDraftInFlight(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	key := ChatKey{Chat: 7}
	d := o.Draft(bg, key, nil)
	tg.holdDrafts()
	d.Show("the answer so fa")
	clock.Advance(DefaultDraftHold)
	waitFor(t, "draft in flight", func() bool { return tg.draftsStarted() == 1 })

	d.End()
	answer := o.Send(bg, key, High, Content{Text: "the answer so far, complete"}, SendOptions{})
	waitTimer(t, clock, "the answer waits for the draft", clock.Now().Add(DefaultDraftSettle))
	assert.Empty(t, tg.callsTo(7), "nothing reached Telegram yet")
	tg.releaseDrafts()
	_, err := await(t, answer.Sent())
	require.NoError(t, err)
	calls := tg.callsTo(7)
	require.Len(t, calls, 2)
	assert.Equal(t, []string{"sendMessageDraft", "sendMessage"}, []string{calls[0].Method, calls[1].Method})

	// A draft call that hangs holds the answer up for Settle at most.
	e := o.Draft(bg, key, nil)
	tg.holdDrafts()
	e.Show("second reply")
	waitTimer(t, clock, "paced after the first draft", clock.Now().Add(DefaultDraftInterval))
	clock.Advance(DefaultDraftInterval)
	waitFor(t, "second draft in flight", func() bool { return tg.draftsStarted() == 2 })
	e.End()
	second := o.Send(bg, key, High, Content{Text: "second reply, complete"}, SendOptions{})
	settle := clock.Now().Add(DefaultDraftSettle)
	waitTimer(t, clock, "the answer waits", settle)
	clock.Advance(DefaultDraftSettle)
	_, err = await(t, second.Sent())
	require.NoError(t, err)
	assert.Equal(t, "sendMessage", tg.callsTo(7)[2].Method, "sent although the draft still hangs")
}

// A draft still being written does not hold up other messages, such as an
// approval prompt.
func TestLiveDraftDoesNotHoldMessages(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	key := ChatKey{Chat: 7}
	d := o.Draft(bg, key, nil)
	tg.holdDrafts()
	d.Show("I will run it")
	clock.Advance(DefaultDraftHold)
	waitFor(t, "draft in flight", func() bool { return tg.draftsStarted() == 1 })
	_, err := await(t, o.Send(bg, key, High, Content{Text: "Approve?"}, SendOptions{}).Sent())
	require.NoError(t, err)
	tg.releaseDrafts()
	d.End()
}

func TestCloseEndsDrafts(t *testing.T) {
	clock := newManualClock()
	o, tg := newDraftOutbox(t, clock)
	d := o.Draft(bg, ChatKey{Chat: 7}, nil)
	tg.holdDrafts()
	d.Show("words")
	clock.Advance(DefaultDraftHold)
	waitFor(t, "draft in flight", func() bool { return tg.draftsStarted() == 1 })
	require.NoError(t, o.Close(context.Background()), "the call in flight is cancelled, not waited for")
	d.Show("more words")
	late := o.Draft(bg, ChatKey{Chat: 8}, nil)
	late.Show("late")
	assert.Equal(t, 1, tg.draftsStarted())
	assert.Empty(t, tg.draftCalls(), "the cancelled call never completed")
}

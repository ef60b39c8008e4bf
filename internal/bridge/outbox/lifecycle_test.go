package outbox

import (
	"context"
	"encoding/json"
	"fmt"
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
	// The default bucket lets the edit and its replacement go without
	// waiting for a refill (the calls kept for high ops aside), so the only
	// wait on the manual clock is the 429 pause this test is about.
	o, tg := newTestOutbox(t, clock, Options{})
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

package outbox

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	// Advance the clock only once every granted call was made and ended, so
	// each is recorded (and released) at the time it was granted; the check
	// and the advance hold the gate's lock, so no grant slips in between.
	for len(tg.Calls()) < chats {
		waitFor(t, "the granted calls and the gate's next wait", func() bool {
			o.gate.mu.Lock()
			defer o.gate.mu.Unlock()
			if len(tg.Calls()) != o.gate.granted || o.gate.released != o.gate.granted {
				return false // a call counts from its response: let every granted one end first
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
	assert.Equal(t, t0, calls[DefaultGlobalBurst-1].At, "a window's worth of answers goes out at once")
	assert.Equal(t, t0.Add(span+time.Millisecond), calls[DefaultGlobalBurst].At,
		"the next once the first left the window, a span after their responses")
	assert.Equal(t, t0.Add(span+time.Millisecond), calls[chats-1].At, "answers are never spread out")
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

// TestLowOpsLeaveASlotForHighOps: progress edits spend at most two of a
// private chat's six calls; the four they leave carry an answer of four
// parts at once, however much progress went before.
func TestLowOpsLeaveASlotForHighOps(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	key := ChatKey{Chat: 30}
	tg.seed(30, 10, "progress 0")
	progress := o.Adopt(key, 10)
	t0 := clock.Now()
	for i := 1; i <= 2; i++ { // one at a time, so nothing coalesces
		_, err := await(t, o.Edit(bg, progress, Low, Content{Text: fmt.Sprint("progress ", i)}))
		require.NoError(t, err)
	}
	third := o.Edit(bg, progress, Low, Content{Text: "progress 3"})
	waitFor(t, "the third edit waits for a refill", func() bool { return clock.hasWaiterAt(t0.Add(DefaultPrivateInterval)) })
	require.Len(t, tg.Calls(), 2, "a low op does not take the calls kept for high ops")
	// An answer in four parts arriving now goes out at once, with the kept calls.
	var parts []*Message
	for i := range 4 {
		parts = append(parts, o.Send(bg, key, High, Content{Text: fmt.Sprint("part ", i)}, SendOptions{}))
	}
	for _, p := range parts {
		_, err := await(t, p.Sent())
		require.NoError(t, err)
	}
	calls := tg.Calls()
	require.Len(t, calls, 6)
	for _, c := range calls[2:] {
		assert.Equal(t, t0, c.At, "%q was sent without waiting for a refill", c.Text)
	}
	assert.Equal(t, []string{"part 0", "part 1", "part 2", "part 3"}, texts(calls[2:]), "and did not wait behind the edit")
	clock.Advance(10 * time.Second)
	_, err := await(t, third)
	require.NoError(t, err)
}

// TestA429MakesAPrivateChatBurstLess: after a 429 a private chat's bucket is
// halved for PenaltyMemory, also across its worker retiring, and then
// bursts as before.
func TestA429MakesAPrivateChatBurstLess(t *testing.T) {
	clock := newAutoClock()
	o, tg := newTestOutbox(t, clock, Options{})
	n := 0
	tg.setScript(func(c call) error {
		if n++; n == 2 {
			return errTooMany(1)
		}
		return nil
	})
	key := ChatKey{Chat: 40}
	burst := func(tag string) []call {
		t.Helper()
		before := len(tg.Calls())
		// The calls are held until the whole burst is queued: a worker
		// that ran dry between two Sends would wait for its bucket to
		// settle, and this clock jumps over every wait.
		tg.hold()
		var ms []*Message
		for i := range DefaultPrivateBurst {
			ms = append(ms, o.Send(bg, key, High, Content{Text: fmt.Sprint(tag, i)}, SendOptions{}))
		}
		tg.release()
		for _, m := range ms {
			_, err := await(t, m.Sent())
			require.NoError(t, err)
		}
		return tg.Calls()[before:]
	}
	first := burst("a")
	require.Len(t, first, DefaultPrivateBurst+1)
	require.ErrorAs(t, first[1].Err, new(*bot.TooManyRequestsError))
	assertTokenBucket(t, first[2:], DefaultPrivateBurst/2, DefaultPrivateInterval)
	assert.Less(t, first[2].At, first[len(first)-1].At, "the retries after the 429 did not go out at once")

	waitFor(t, "the idle worker to retire", func() bool { return o.Stats().ActiveChats == 0 })
	again := burst("b")
	assertTokenBucket(t, again, DefaultPrivateBurst/2, DefaultPrivateInterval)
	assert.Less(t, again[0].At, again[len(again)-1].At, "a new worker remembers the 429")

	waitFor(t, "the idle worker to retire", func() bool { return o.Stats().ActiveChats == 0 })
	clock.Advance(DefaultPenaltyMemory)
	later := burst("c")
	for _, c := range later {
		assert.Equal(t, later[0].At, c.At, "after PenaltyMemory the chat bursts %d again", DefaultPrivateBurst)
	}
	assert.Equal(t, uint64(1), o.Stats().RateLimited)
}

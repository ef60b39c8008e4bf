package outbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failUntilUp makes every call fail like a 502 until up is closed.
func failUntilUp(tg *fakeTG) (up func()) {
	down := make(chan struct{})
	tg.setScript(func(call) error {
		select {
		case <-down:
			return nil
		default:
			return err5xx("sendMessage")
		}
	})
	return func() { close(down) }
}

// failAnswerTimes lets the answer in chat 1 fail n times, advancing the
// manual clock through each backoff, and returns when the n-th failure is
// in.
func failAnswerTimes(t *testing.T, clock *fakeClock, tg *fakeTG, n int, backoff func(int) time.Duration) {
	t.Helper()
	for k := 1; ; k++ {
		waitFor(t, fmt.Sprintf("attempt %d", k), func() bool { return len(tg.callsTo(1)) == k })
		if k == n {
			return
		}
		last := tg.callsTo(1)[k-1].At
		retry := last.Add(backoff(k))
		waitFor(t, "the worker to wait for its backoff", func() bool { return clock.hasWaiterAt(retry) })
		clock.Advance(retry.Sub(clock.Now()))
	}
}

func TestSuccessEndsEveryBackoffAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		signal func(o *Outbox) *Pending // a successful call, or the bridge's getUpdates
	}{
		{"a send in another chat succeeds", func(o *Outbox) *Pending {
			return o.Send(bg, ChatKey{Chat: 2}, High, Content{Text: "other chat"}, SendOptions{}).Sent()
		}},
		{"getUpdates succeeds (Reachable)", func(o *Outbox) *Pending {
			o.Reachable(o.CallStarted())
			return resolvedPending(Result{}, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newManualClock()
			o, tg := newTestOutbox(t, clock, Options{})
			up := failUntilUp(tg)
			tg.seed(1, 10, "progress 0")
			progress := o.Adopt(ChatKey{Chat: 1}, 10)
			answer := o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "the answer"}, SendOptions{})
			// Eight failures: the backoff is at its cap (5 s for the answer).
			failAnswerTimes(t, clock, tg, 8, func(k int) time.Duration { return o.backoff(k, DefaultHighBackoffMax) })
			edit := o.Edit(bg, progress, Low, Content{Text: "progress 1"})
			waitFor(t, "the worker to wait for its backoff", func() bool { return clock.Waiters() > 0 })

			up()
			back := clock.Now()
			_, err := await(t, tt.signal(o))
			require.NoError(t, err)
			// No clock advance: both go out the moment Telegram is known to
			// be back, the answer first.
			_, err = await(t, answer.Sent())
			require.NoError(t, err)
			_, err = await(t, edit)
			require.NoError(t, err)
			calls := tg.callsTo(1)
			require.Len(t, calls, 10)
			assert.Equal(t, "the answer", calls[8].Text)
			assert.Equal(t, "progress 1", calls[9].Text)
			for _, c := range calls[8:] {
				assert.NoError(t, c.Err)
				assert.Equal(t, back, c.At, "%s waited after Telegram was back", c.Text)
			}
		})
	}
}

func TestBackoffCapDependsOnPriority(t *testing.T) {
	tests := []struct {
		prio Priority
		want []time.Duration
	}{
		{High, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}},
		{Low, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.prio.String(), func(t *testing.T) {
			o, tg := newTestOutbox(t, newAutoClock(), Options{})
			n := 0
			tg.setScript(func(call) error {
				if n < len(tt.want) {
					n++
					return errTransport("sendMessage")
				}
				return nil
			})
			_, err := await(t, o.Send(bg, ChatKey{Chat: 5}, tt.prio, Content{Text: "x"}, SendOptions{}).Sent())
			require.NoError(t, err)
			calls := tg.Calls()
			require.Len(t, calls, len(tt.want)+1)
			for i, want := range tt.want {
				assert.Equal(t, want, calls[i+1].At.Sub(calls[i].At), "gap after failure %d", i+1)
			}
		})
	}
}

func TestProbeNoticesTelegramIsBack(t *testing.T) {
	clock := newManualClock()
	tg := newProbingTG(clock)
	// A long first backoff, so that only the probe can explain an early send.
	o := New(tg, Options{Clock: clock, Jitter: noJitter, BackoffMin: 4 * time.Second})
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		_ = o.Close(ctx)
	})
	tg.down.Store(true)
	t0 := clock.Now()
	answer := o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "the answer"}, SendOptions{})
	waitFor(t, "the first attempt and the first probe", func() bool {
		return len(tg.Calls()) == 1 && tg.probes.Load() >= 1 && clock.hasWaiterAt(t0.Add(time.Second))
	})
	tg.down.Store(false)
	clock.Advance(time.Second) // the next probe, 3 s before the answer's retry
	_, err := await(t, answer.Sent())
	require.NoError(t, err)
	calls := tg.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, t0.Add(time.Second), calls[1].At)
}

func TestNoProbingWhileTelegramAnswers(t *testing.T) {
	clock := newAutoClock()
	tg := newProbingTG(clock)
	o := New(tg, Options{Clock: clock, Jitter: noJitter})
	defer o.Close(bg)
	for i := range 5 {
		_, err := await(t, o.Send(bg, ChatKey{Chat: int64(i + 1)}, High, Content{Text: "x"}, SendOptions{}).Sent())
		require.NoError(t, err)
	}
	assert.Zero(t, tg.probes.Load())
}

func TestHangingProgressEditDoesNotHoldUpTheAnswer(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	key := ChatKey{Chat: 1}
	tg.seed(1, 10, "progress 0")
	progress := o.Adopt(key, 10)
	tg.holdMethod("editMessageText")
	t0 := clock.Now()
	edit := o.Edit(bg, progress, Low, Content{Text: "progress 1"})
	waitFor(t, "the edit to hang", func() bool { return tg.Started() == 1 })
	answer := o.Send(bg, key, High, Content{Text: "the answer"}, SendOptions{})
	// Not beside a call that may still answer normally (a 429 for it would
	// come too late for the answer)...
	overtake := t0.Add(DefaultOvertakeAfter)
	waitFor(t, "the answer to wait for the edit", func() bool { return clock.hasWaiterAt(overtake) })
	assert.Equal(t, 1, tg.Started())
	// ...but once the edit counts as hanging, the answer goes beside it.
	clock.Advance(DefaultOvertakeAfter)
	res, err := await(t, answer.Sent())
	require.NoError(t, err, "the answer went out while the edit hung")
	assert.Equal(t, []string{"the answer"}, texts(tg.Calls()))
	assert.Equal(t, overtake, tg.Calls()[0].At)
	assert.Equal(t, MessageID(11), res.MessageID)
	tg.release()
	_, err = await(t, edit)
	require.NoError(t, err)
	assert.Equal(t, []string{"the answer", "progress 1"}, texts(tg.Calls()))
}

func TestHangingCallIsBoundedByItsTimeout(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{CallTimeout: 20 * time.Millisecond})
	tg.holdMethod("sendMessage")
	m := o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "x"}, SendOptions{})
	waitFor(t, "a retry after the hanging call timed out", func() bool { return tg.Started() >= 2 })
	tg.release()
	_, err := await(t, m.Sent())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, o.Stats().Retries, uint64(1))
}

func TestCallsForOneMessageNeverOverlap(t *testing.T) {
	o, tg := newTestOutbox(t, newAutoClock(), Options{})
	key := ChatKey{Chat: 1}
	tg.seed(1, 10, "approval")
	prompt := o.Adopt(key, 10)
	tg.holdMethod("editMessageText")
	low := o.Edit(bg, prompt, Low, Content{Text: "refreshed"})
	waitFor(t, "the low edit to hang", func() bool { return tg.Started() == 1 })
	high := o.Edit(bg, prompt, High, Content{Text: "approved"})
	// Queued after the high edit; once it is out, the worker has passed
	// over the high edit, which must still wait for the low one.
	_, err := await(t, o.Send(bg, key, High, Content{Text: "other"}, SendOptions{}).Sent())
	require.NoError(t, err)
	assert.Equal(t, 2, tg.Started(), "a second edit of the message started while one was in flight")
	tg.release()
	for _, p := range []*Pending{low, high} {
		_, err := await(t, p)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"other", "refreshed", "approved"}, texts(tg.Calls()))
}

func texts(calls []call) []string {
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.Text)
	}
	return out
}

// TestNetworkErrorsAreRetriedLike502: every way a request can fail before
// Telegram answers it is retried, never dropped.
func TestNetworkErrorsAreRetriedLike502(t *testing.T) {
	do := func(err error) error {
		return fmt.Errorf("error do request for method sendMessage, %w",
			&url.Error{Op: "Post", URL: "https://api.telegram.org/bot***/sendMessage", Err: err})
	}
	tests := map[string]error{
		"connection refused": do(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
		"connection reset":   do(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}),
		"dial timeout":       do(&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}),
		"call timeout":       do(context.DeadlineExceeded),
		"DNS failure":        do(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.telegram.org", IsNotFound: true}}),
		"unexpected EOF":     fmt.Errorf("error read response body for method sendMessage, %w", errors.New("unexpected EOF")),
		"500":                fmt.Errorf("error response from telegram for method sendMessage, %d %s", 500, "Internal Server Error"),
		"502 from a proxy":   fmt.Errorf("error decode response body for method sendMessage, <html>502 Bad Gateway</html>, %w", errors.New("invalid character '<'")),
		"503":                fmt.Errorf("error response from telegram for method sendMessage, %d %s", 503, "Service Unavailable"),
		"504":                fmt.Errorf("error response from telegram for method sendMessage, %d %s", 504, "Gateway Timeout"),
	}
	for name, failure := range tests {
		t.Run(name, func(t *testing.T) {
			cls, _ := classify(failure)
			assert.Equal(t, classTransient, cls)
			o, tg := newTestOutbox(t, newAutoClock(), Options{})
			n := 0
			tg.setScript(func(call) error {
				if n < 2 {
					n++
					return failure
				}
				return nil
			})
			_, err := await(t, o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "x"}, SendOptions{}).Sent())
			require.NoError(t, err)
			assert.Len(t, tg.Calls(), 3)
		})
	}
}

// TestOnlyNewerSuccessesEndTheBackoff: a long poll sent before the outage
// may come back fine in the middle of it; that proves nothing about the
// failures after it was sent.
func TestOnlyNewerSuccessesEndTheBackoff(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	up := failUntilUp(tg)
	stale := o.CallStarted() // the long poll goes out
	answer := o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "the answer"}, SendOptions{})
	waitFor(t, "the first attempt", func() bool { return len(tg.callsTo(1)) == 1 })
	retry := tg.callsTo(1)[0].At.Add(o.backoff(1, DefaultHighBackoffMax))
	waitFor(t, "the worker to wait for its backoff", func() bool { return clock.hasWaiterAt(retry) })
	o.Reachable(stale) // ...and returns during the outage
	up()
	o.Reachable(o.CallStarted()) // the first poll sent after the failure
	_, err := await(t, answer.Sent())
	require.NoError(t, err)
	calls := tg.callsTo(1)
	require.Len(t, calls, 2, "the stale success triggered no retry into the outage")
	assert.Equal(t, calls[0].At, calls[1].At)
}

// TestChatFailingOnItsOwnKeepsItsBackoff: successes in other chats end a
// chat's backoff at most once per HighBackoffMax, so a chat whose own calls
// keep failing does not retry at the pace of everyone else's successes.
func TestChatFailingOnItsOwnKeepsItsBackoff(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{})
	tg.setScript(func(c call) error {
		if c.Chat == 1 {
			return err5xx("sendMessage")
		}
		return nil
	})
	o.Send(bg, ChatKey{Chat: 1}, High, Content{Text: "stuck"}, SendOptions{})
	waitFor(t, "the first attempt", func() bool { return len(tg.callsTo(1)) == 1 })
	for i := range 10 {
		_, err := await(t, o.Send(bg, ChatKey{Chat: int64(100 + i)}, High, Content{Text: "fine"}, SendOptions{}).Sent())
		require.NoError(t, err)
	}
	// One early retry after the first success elsewhere, then its backoff.
	waitFor(t, "the early retry", func() bool { return len(tg.callsTo(1)) == 2 })
	retry := tg.callsTo(1)[1].At.Add(o.backoff(2, DefaultHighBackoffMax))
	waitFor(t, "the worker to wait for its backoff", func() bool { return clock.hasWaiterAt(retry) })
	_, err := await(t, o.Send(bg, ChatKey{Chat: 200}, High, Content{Text: "fine"}, SendOptions{}).Sent())
	require.NoError(t, err)
	assert.Len(t, tg.callsTo(1), 2)
}

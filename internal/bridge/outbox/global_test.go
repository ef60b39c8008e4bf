package outbox

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGlobalBudgetGoesToAnswersFirstThenStalestProgress: with the global
// budget used up, waiting chats are served answers first, then the
// progress message that has been stale the longest, whatever order their
// workers asked in.
func TestGlobalBudgetGoesToAnswersFirstThenStalestProgress(t *testing.T) {
	clock := newManualClock()
	// 2 calls per second overall; a progress edit leaves one of the two
	// free, so each step below admits exactly one call.
	o, tg := newTestOutbox(t, clock, Options{GlobalBurst: 2, GlobalRate: 2})
	useGlobalBudget(o, 2)
	// Chats 1..4 get a progress edit; chat 4's progress went stale first.
	// Chat 1 asks first, then keeps editing: coalescing keeps its place.
	var pending []*Pending
	progress := map[int64]*Message{}
	for chat := int64(1); chat <= 4; chat++ {
		tg.seed(chat, 10, "progress 0")
		progress[chat] = o.Adopt(ChatKey{Chat: chat}, 10)
	}
	for _, chat := range []int64{4, 3, 2, 1} {
		pending = append(pending, o.Edit(bg, progress[chat], Low, Content{Text: fmt.Sprintf("chat %d step 1", chat)}))
		advanceGate(o, clock, time.Millisecond)
	}
	pending = append(pending, o.Edit(bg, progress[4], Low, Content{Text: "chat 4 step 2"}))
	answer := o.Send(bg, ChatKey{Chat: 5}, High, Content{Text: "answer"}, SendOptions{})
	pending = append(pending, answer.Sent())

	waitFor(t, "every chat to wait for the budget", func() bool { return gateWaiters(o) == 5 })
	want := []string{"answer", "chat 4 step 2", "chat 3 step 1", "chat 2 step 1", "chat 1 step 1"}
	for n := 1; n <= len(want); n++ {
		waitFor(t, "the gate to wait for the window", func() bool { return dispatcherSleeps(o, clock) })
		advanceGate(o, clock, 10*time.Second)
		waitFor(t, fmt.Sprintf("call %d", n), func() bool {
			return len(tg.Calls()) == n
		})
	}
	for _, p := range pending {
		_, err := await(t, p)
		require.NoError(t, err)
	}
	assert.Equal(t, want, texts(tg.Calls()))
}

// TestAnswerOvertakesProgressWaitingForTheGlobalBudget: a progress edit
// waiting for a global slot does not hold its chat's answer behind it.
func TestAnswerOvertakesProgressWaitingForTheGlobalBudget(t *testing.T) {
	clock := newManualClock()
	o, tg := newTestOutbox(t, clock, Options{GlobalBurst: 2, GlobalRate: 2})
	useGlobalBudget(o, 2)
	key := ChatKey{Chat: 1}
	tg.seed(1, 10, "progress 0")
	edit := o.Edit(bg, o.Adopt(key, 10), Low, Content{Text: "progress 1"})
	waitFor(t, "the edit to wait for the budget", func() bool { return dispatcherSleeps(o, clock) })
	answer := o.Send(bg, key, High, Content{Text: "answer"}, SendOptions{})
	waitFor(t, "the answer to wait for the budget", func() bool {
		o.gate.mu.Lock()
		defer o.gate.mu.Unlock()
		return len(o.gate.waiters) == 1 && o.gate.waiters[0].prio == High
	})
	waitFor(t, "the gate to wait for the window", func() bool { return dispatcherSleeps(o, clock) })
	advanceGate(o, clock, 10*time.Second)
	_, err := await(t, answer.Sent())
	require.NoError(t, err)
	assert.Equal(t, []string{"answer"}, texts(tg.Calls()))
	advanceGate(o, clock, 10*time.Second)
	_, err = await(t, edit)
	require.NoError(t, err)
}

func TestGateGrantsNoMoreThanTheWindow(t *testing.T) {
	clock := newManualClock()
	t0 := clock.Now()
	var started int
	g := newGate(clock, 6, 100*time.Millisecond, time.Minute, func() { started++ }) // 6 per 600 ms
	var granted, waiting []*ticket
	for i := range 8 {
		tk := g.acquire(High, t0.Add(time.Duration(i)), 1)
		select {
		case <-tk.granted:
			granted = append(granted, tk)
		default:
			waiting = append(waiting, tk)
		}
	}
	assert.Len(t, granted, 6, "answers may take every slot at once")
	assert.Equal(t, 1, started, "one dispatcher for all waiters")
	// While the calls are in flight, a waiter cannot go: they might reach
	// Telegram at any moment until their responses.
	clock.Advance(time.Second)
	wait, ok := g.grantLocked(clock.Now())
	require.True(t, ok)
	assert.Equal(t, 600*time.Millisecond+time.Millisecond, wait, "calls in flight count until a span after they end")
	// One call ends now: it counts for a full span after its response.
	g.release(granted[0].slot)
	wait, _ = g.grantLocked(clock.Now())
	assert.Equal(t, 600*time.Millisecond+time.Millisecond, wait)
	clock.Advance(wait)
	_, _ = g.grantLocked(clock.Now())
	assert.False(t, g.cancel(waiting[0]), "granted once the released call left the window")
	assert.True(t, g.cancel(waiting[1]), "a waiting ticket can be withdrawn")
	// A call never released stops counting after its longest timeout.
	clock.Advance(2 * time.Minute)
	assert.Equal(t, 0, g.win.count(clock.Now()))
}

func TestGateSpareTakesNoMessageSlot(t *testing.T) {
	clock := newManualClock()
	g := newGate(clock, 12, 100*time.Millisecond, time.Minute, func() {}) // 12 per 1.2 s; spare: 2 per span
	assert.True(t, g.spare())
	assert.True(t, g.spare())
	assert.False(t, g.spare(), "best effort is capped at a sixth of the window")
	for range 12 {
		tk := g.acquire(High, clock.Now(), 1)
		select {
		case <-tk.granted:
		default:
			t.Fatal("typing took a message's slot")
		}
		g.release(tk.slot)
	}
	clock.Advance(2 * time.Second)
	assert.True(t, g.spare(), "the window is empty again")
	tk := g.acquire(Low, clock.Now(), 1)
	<-tk.granted
	tk = g.acquire(Low, clock.Now(), 1)
	<-tk.granted
	assert.False(t, g.spare(), "no best effort while messages fill a sixth of the window")
}

// dispatcherSleeps reports whether the gate's dispatcher waits on the
// manual clock, so that advancing it wakes the dispatcher.
func dispatcherSleeps(o *Outbox, clock *fakeClock) bool {
	o.gate.mu.Lock()
	at := o.gate.sleepUntil
	o.gate.mu.Unlock()
	return !at.IsZero() && clock.hasWaiterAt(at)
}

// advanceGate advances the manual clock without racing the dispatcher
// between reading the clock and starting its timer.
func advanceGate(o *Outbox, clock *fakeClock, d time.Duration) {
	o.gate.mu.Lock()
	defer o.gate.mu.Unlock()
	clock.Advance(d)
}

func gateWaiters(o *Outbox) int {
	o.gate.mu.Lock()
	defer o.gate.mu.Unlock()
	return len(o.gate.waiters)
}

// useGlobalBudget counts n calls of other chats in the global window now.
func useGlobalBudget(o *Outbox, n int) {
	o.gate.mu.Lock()
	defer o.gate.mu.Unlock()
	now := o.clock.Now()
	for range n {
		o.gate.win.add(now)
	}
	o.gate.next = now.Add(o.gate.gap) // as if they had gone out on the schedule
}

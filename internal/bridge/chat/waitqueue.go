package chat

import (
	"time"

	"github.com/untether/untether/internal/runner"
)

// A WaitQueue is a module's work that waits, in each chat, for the chat to
// be free: a scheduled run, a webhook's. It never folds into a turn
// someone started, and never overtakes work that came before it and still
// waits, whichever module's: every WaitQueue of a registry puts its work
// in the chat's one queue, everything joins it, even while the chat is
// free, and the queue goes oldest first for as long as the chat is free.
// (A limit retry does not use it.) An album or forwards being collected
// go first once the chat is free. Waiting work looks again
// when a turn ends or the CLI exits, and every waitQueuePoll besides, as a
// safety net for a chat freed some other way.
type WaitQueue[T any] struct {
	q     *chatQueue
	start func(*Chat, T)
}

// waitQueuePoll is how often work waiting for a busy chat looks again.
const waitQueuePoll = 2 * time.Second

// chatQueue is the queue of each chat that every WaitQueue of a registry
// shares: with one queue per module, each module's would be run in turn
// at a turn's end, so a module's newer work would go before another's
// older work.
type chatQueue struct {
	slot Slot[waiting]
}

type waiting struct {
	items   []func(*Chat) // each starts one module's item
	polling bool
}

// NewWaitQueue gives a module its door to the chats' queue; start sends an
// item once its chat is free, on the chat's actor. The first call sets the
// queue up in r.
func NewWaitQueue[T any](r *Registry, start func(*Chat, T)) WaitQueue[T] {
	if r.queue == nil {
		q := &chatQueue{slot: NewSlot[waiting](r)}
		r.OnEvent(func(c *Chat, ev runner.Event) {
			switch ev.(type) {
			case runner.TurnCompleted, runner.ProcessExited:
				if len(q.slot.Get(c).items) > 0 {
					c.Post(func() { q.run(c) })
				}
			}
		})
		r.queue = q
	}
	return WaitQueue[T]{q: r.queue, start: start}
}

// Add queues v in c, behind what waits there, and starts what may start.
// Call it on c's actor.
func (w WaitQueue[T]) Add(c *Chat, v T) {
	wt := w.q.slot.Get(c)
	wt.items = append(wt.items, func(c *Chat) { w.start(c, v) })
	w.q.run(c)
}

// run starts the waiting items, oldest first, while the chat is free.
func (q *chatQueue) run(c *Chat) {
	w := q.slot.Get(c)
	for len(w.items) > 0 {
		// A busy chat keeps what the phone module collects (an album,
		// forwards) for their own wait; a free one sends it first.
		if c.busy() {
			q.poll(c)
			return
		}
		c.flushPending()
		if c.busy() {
			q.poll(c)
			return
		}
		start := w.items[0]
		w.items = w.items[1:]
		start(c)
	}
}

func (q *chatQueue) poll(c *Chat) {
	w := q.slot.Get(c)
	if w.polling {
		return
	}
	w.polling = true
	time.AfterFunc(waitQueuePoll, func() {
		c.Post(func() {
			q.slot.Get(c).polling = false
			q.run(c)
		})
	})
}

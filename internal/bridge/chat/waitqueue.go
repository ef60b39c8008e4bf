package chat

import (
	"time"

	"github.com/untether/untether/internal/runner"
)

// A WaitQueue is a module's work that waits, in each chat, for the chat to
// be free: a scheduled run, a webhook's. It never folds into a turn
// someone started, and never overtakes work that came before it and still
// waits: everything joins the queue, even while the chat is free, and the
// queue goes oldest first for as long as the chat is free. An album or
// forwards being collected go first. Waiting work looks again when a turn
// ends and every waitQueuePoll besides, as a chat can be freed without a
// turn ending (its CLI died).
type WaitQueue[T any] struct {
	slot  Slot[waiting[T]]
	start func(*Chat, T)
}

// waitQueuePoll is how often work waiting for a busy chat looks again.
const waitQueuePoll = 2 * time.Second

type waiting[T any] struct {
	items   []T
	polling bool
}

// NewWaitQueue asks r for a queue in each chat; start sends an item once
// its chat is free, on the chat's actor.
func NewWaitQueue[T any](r *Registry, start func(*Chat, T)) WaitQueue[T] {
	q := WaitQueue[T]{slot: NewSlot[waiting[T]](r), start: start}
	r.OnEvent(func(c *Chat, ev runner.Event) {
		if _, ok := ev.(runner.TurnCompleted); ok && len(q.slot.Get(c).items) > 0 {
			c.Post(func() { q.run(c) })
		}
	})
	return q
}

// Add queues v in c, behind what waits there, and starts what may start.
// Call it on c's actor.
func (q WaitQueue[T]) Add(c *Chat, v T) {
	w := q.slot.Get(c)
	w.items = append(w.items, v)
	q.run(c)
}

// run starts the waiting items, oldest first, while the chat is free.
func (q WaitQueue[T]) run(c *Chat) {
	w := q.slot.Get(c)
	for len(w.items) > 0 {
		c.flushPending()
		if c.busy() {
			q.poll(c)
			return
		}
		v := w.items[0]
		w.items = w.items[1:]
		q.start(c, v)
	}
}

func (q WaitQueue[T]) poll(c *Chat) {
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

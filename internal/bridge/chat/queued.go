package chat

import (
	"fmt"
	"slices"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// The CLI keeps messages written during a turn in its own queue and reports
// each one's fate through command_lifecycle (queued → started → completed |
// cancelled). Nothing the user wrote may vanish there: a message the CLI
// cancels before reading it gets a notice, and messages still queued when
// the CLI dies are sent again once the session resumes.

// onLifecycle follows one message's fate in the CLI.
func (c *Chat) onLifecycle(e runner.MessageLifecycle) {
	o := c.inputs[e.UUID]
	switch e.State {
	case runner.MessageStarted:
		c.started = e.UUID
	case runner.MessageCancelled:
		if o != nil && o.state != runner.MessageStarted {
			c.reply(fmt.Sprintf("✖️ Claude did not read “%s”: it was cancelled with the turn before it. Send it again if you still want it.",
				render.EscapeHTML(o.label)), o.msgID)
		}
		c.forgetSent(e.UUID)
		return
	}
	if o != nil {
		o.state = e.State
	}
}

// forgetSent drops a message the CLI is done with.
func (c *Chat) forgetSent(uuids ...runner.MessageUUID) {
	for _, u := range uuids {
		delete(c.inputs, u)
		delete(c.userMsgs, u)
	}
	c.sentOrder = slices.DeleteFunc(c.sentOrder, func(u runner.MessageUUID) bool {
		_, ok := c.inputs[u]
		return !ok
	})
}

// resendQueued runs when the CLI died on its own: the messages it had
// queued but not started are handed over again, in order and ahead of any
// still waiting, once the session resumes. The message whose turn died is
// not: the crash notice tells the user, and re-running it could repeat its
// tools. Whatever the CLI had is forgotten, so nothing leaks across
// processes.
func (c *Chat) resendQueued() {
	var again []*Outgoing
	for _, u := range c.sentOrder {
		o := c.inputs[u]
		if o == nil || o.state == runner.MessageStarted || o.state == runner.MessageCompleted {
			continue
		}
		again = append(again, &Outgoing{input: o.input, msgID: o.msgID, label: o.label, from: o.from, resend: true, note: o.note})
	}
	clear(c.inputs)
	clear(c.userMsgs)
	c.sentOrder = nil
	c.started = ""
	if len(again) == 0 {
		return
	}
	c.logger().Info().Int("messages", len(again)).Msg("re-sending messages the CLI had queued when it stopped")
	c.reply(fmt.Sprintf("↻ Claude stopped with %d message(s) of yours still queued; they are sent again as the session resumes.", len(again)),
		again[0].msgID)
	c.sends.queue = append(again, c.sends.queue...)
	if c.turn == nil || c.turn.done {
		c.startTurn(again[0].msgID)
		if n := again[0].note; n != "" { // a scheduled run's, a webhook's: the turn says why it came
			c.turn.notes = append(c.turn.notes, n)
		}
	}
	c.pump()
}

package chat

import (
	"fmt"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
)

// The "waiting for a free Claude slot" notice. It is status, like a
// progress message, so it goes at low priority: when many chats wait (200
// chats, 16 live CLIs), answers and approvals keep the Telegram budget, and
// the notices share what is left by how long each has waited. When the
// message reaches the CLI, the notice becomes the turn's progress message
// (one edit) instead of being deleted and followed by a new progress
// message: two calls fewer per waiting turn, and the user's reply shows one
// message turning from "waiting" into "working".

// refreshSlotNotice shows, updates or removes the "waiting for a slot"
// notice, so a wait is never silent and never outlives its reason.
func (c *Chat) refreshSlotNotice() {
	if !c.waitingForSlot() || time.Since(c.sends.since) < slotNoticeAfter {
		if !c.waitingForSlot() && (c.sends.inFlight == nil || !c.adoptSlotNotice()) {
			c.clearSlotNotice()
		}
		return
	}
	st := c.b.opts.Pool.Stats()
	text := fmt.Sprintf("⏳ Waiting for a free Claude slot (%d of %d busy: %d working, %d waiting for approval). "+
		"Your message starts by itself when one frees; /cancel stops waiting.", st.Live, st.Max, st.Working, st.Approval)
	if len(c.sends.queue) > 0 {
		text += fmt.Sprintf(" %d more message(s) wait behind it, in order.", len(c.sends.queue))
	}
	switch {
	case c.sends.notice == nil:
		c.sends.notice = c.b.out.Send(c.ctx(), c.outKey, outbox.Low, outbox.Content{Text: text},
			outbox.SendOptions{ReplyTo: outbox.MessageID(c.sends.inFlight.msgID), Silent: true, Tag: "slot-wait"})
	case text != c.sends.text:
		c.b.out.Edit(c.ctx(), c.sends.notice, outbox.Low, outbox.Content{Text: text})
	}
	c.sends.text = text
}

func (c *Chat) clearSlotNotice() {
	if c.sends.notice == nil {
		return
	}
	c.b.out.Delete(c.ctx(), c.sends.notice, outbox.Low)
	c.sends.notice, c.sends.text = nil, ""
}

// adoptSlotNotice makes the notice the progress message of the turn whose
// message got its slot, and queues its first render at once (at low
// priority, like every progress edit: under a tight Telegram budget the
// "waiting" text can outlive the wait by as long as progress edits wait).
// It reports false when there is no notice or no turn without a progress
// message to give it to.
func (c *Chat) adoptSlotNotice() bool {
	t, n := c.turn, c.sends.notice
	if n == nil || t == nil || t.done || t.progress != nil {
		return false
	}
	c.sends.notice, c.sends.text = nil, ""
	t.progress = n
	now := time.Now()
	c.renderProgress(t, now)
	c.recordLiveProgress(t, now)
	return true
}

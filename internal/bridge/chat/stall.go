package chat

import (
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/render"
)

// "Is it stuck?" has an answer: a running turn whose CLI prints nothing
// (not even a tool heartbeat) for progress.stall_after says so in its
// progress message, naming what runs; after progress.stall_notify_after
// one notifying message offers ⏹ Cancel and ⏳ Keep waiting. A turn that
// waits on a human decision or on a live slot is not stalled: those waits
// are shown by their own messages.

// stall is a turn's stall bookkeeping.
type stall struct {
	notice      *outbox.Message // the notifying message, while it has buttons
	keptWaiting time.Time       // the last ⏳ Keep waiting press
}

// lastOutput is when the turn last showed life: its start, or the CLI's
// latest stdout line.
func (c *Chat) lastOutput(t *turn) time.Time {
	last := t.view.StartedAt
	if c.sess != nil {
		if lo := c.sess.LastOutput(); lo.After(last) {
			last = lo
		}
	}
	return last
}

// stalledFor is how long the running turn printed nothing, 0 when it is not
// one that can stall.
func (c *Chat) stalledFor(t *turn, now time.Time) time.Duration {
	if t == nil || t.done || len(c.approvals) > 0 || c.waitingForSlot() {
		return 0
	}
	return now.Sub(c.lastOutput(t))
}

// stallNote is the progress message's stall line, empty while output flows.
func (c *Chat) stallNote(t *turn, now time.Time) string {
	idle := c.stalledFor(t, now)
	if idle < c.b.Config().Progress.StallAfter.Std() {
		return ""
	}
	return render.StallNote(t.view, idle)
}

// checkStall sends the notifying message once a turn has been silent for
// stall_notify_after (counted from the last Keep waiting press, if any).
func (c *Chat) checkStall(t *turn, now time.Time) {
	idle := c.stalledFor(t, now)
	if t.stall.notice != nil || idle == 0 {
		return
	}
	if since := now.Sub(t.stall.keptWaiting); !t.stall.keptWaiting.IsZero() && since < idle {
		idle = since
	}
	after := c.b.Config().Progress.StallNotifyAfter.Std()
	if idle < after {
		return
	}
	text := render.EscapeHTML(render.StallNote(t.view, c.stalledFor(t, now))) +
		"\n\nThe turn may be stuck. Cancel it, or keep waiting? (You are asked again after another " +
		render.EscapeHTML(after.String()) + " without output.)"
	kb := render.Keyboard{Rows: [][]render.Button{{
		{Text: "⏹ Cancel", CallbackData: CallbackData(btnCancel, t.cancelToken)},
		{Text: "⏳ Keep waiting", CallbackData: CallbackData(btnKeepWaiting, t.cancelToken)},
	}}}
	// Not silent: this is the one message meant to reach someone who looked away.
	t.stall.notice = c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: text, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(t.replyTo), Tag: "stall"})
	c.logger().Info().Dur("idle", idle).Msg("turn printed nothing for a long time; asked the user")
}

// keepWaiting handles ⏳ Keep waiting: the question is withdrawn and asked
// again only after another stall_notify_after without output.
func (c *Chat) keepWaiting(p Press) {
	t := c.turn
	if t == nil || t.done || t.cancelToken != p.Token || t.stall.notice == nil {
		return
	}
	t.stall.keptWaiting = time.Now()
	c.b.out.Edit(c.ctx(), t.stall.notice, outbox.High, outbox.Content{Text: "⏳ Still waiting (" +
		render.EscapeHTML(UserName(p.From)) + " chose to keep waiting)."})
	t.stall.notice = nil
}

// endStall removes the buttons of a turn's stall question when the turn ends.
func (c *Chat) endStall(t *turn) {
	if t.stall.notice == nil {
		return
	}
	c.b.out.Edit(c.ctx(), t.stall.notice, outbox.High, outbox.Content{Text: "⏳ The turn went quiet for a while; it has ended since."})
	t.stall.notice = nil
}

package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Outgoing is a user message on its way to Claude. Handing it over can take
// long: a cold start costs ~0.75 s, and when every live-process slot is
// taken (by turns that may wait 15 minutes for an approval) the wait for a
// slot has no bound. So it never runs on the actor: the chat keeps its
// messages in order and hands them to a goroutine one at a time, which
// reports back through the mailbox. Meanwhile the chat answers /status,
// /cancel and its buttons as usual.
type Outgoing struct {
	input    runner.UserInput
	msgID    int   // the Telegram message it came from (0: none)
	updateID int64 // its update, confirmed only once handed over (or answered)
	label    string
	// from is the user the prompt is from (a schedule's: its creator);
	// 0 for nobody, as for a [[schedules]] entry. A retry after a limit
	// keeps it (the schedules module).
	from     state.UserID
	resend   bool                // a message re-sent after its CLI died
	state    runner.MessageState // its fate in the CLI, once written
	deferred bool                // left for the next start by a drain
	held     bool                // kept back by a send gate (Hold), which sends it on later
	cancel   context.CancelFunc
	// settled, if set, runs once the message has reached the CLI or the
	// user has been told why not (never when a drain left it for the next
	// start): a scheduled run or a retry stops being pending then
	// (the schedules module).
	settled func()
	// prepare, when set, builds input in the hand-over goroutine (an
	// attachment's download and save, a voice note's transcription: the
	// phone module).
	prepare func(context.Context) (runner.UserInput, error)
	// failed, when set, may answer a failed hand-over itself (true); else
	// the user is told the error (sendErrorText).
	failed func(error) bool
	// restart, if set, runs off the actor before the hand-over: the CLI is
	// restarted for a new spending cap (the budget module).
	restart func(context.Context, *runner.Session)
	// note, if set, is added to the notes of the turn the message starts
	// (a scheduled run's "⏰ scheduled #3").
	note string
}

// sendQueue is the chat's messages not yet written to the CLI.
type sendQueue struct {
	queue    []*Outgoing
	inFlight *Outgoing
	since    time.Time       // when inFlight was handed to its goroutine
	notice   *outbox.Message // "waiting for a free slot", while shown
	text     string          // the notice's current text
}

// slotNoticeAfter is how long a send waits for a live-process slot before
// the user is told; a slot freed by closing an idle process comes sooner.
const slotNoticeAfter = 700 * time.Millisecond

// LabelOf names a message in notices: its first words.
func LabelOf(in runner.UserInput) string {
	const max = 40
	text := []rune(in.Text)
	switch {
	case len(text) == 0 && len(in.Images) > 0:
		return "a photo"
	case len(text) > max:
		return string(text[:max]) + "…"
	}
	return string(text)
}

// enqueue adds a message behind the ones already waiting and starts handing
// them over.
func (c *Chat) enqueue(o *Outgoing) {
	if o.updateID == 0 {
		o.updateID = c.takeUpdate()
	}
	c.sends.queue = append(c.sends.queue, o)
	c.pump()
}

// pump hands the next waiting message to a goroutine, unless one is
// already on its way: the CLI must receive them in the order they came.
func (c *Chat) pump() {
	if c.sends.inFlight != nil || len(c.sends.queue) == 0 {
		return
	}
	sess, err := c.ensureSession()
	if err != nil {
		c.logger().Error().Err(err).Msg("create session")
		for _, o := range c.sends.queue {
			c.reply(c.startErrorText(err), o.msgID) // projects.go
			c.finishOutgoing(o)
		}
		c.sends.queue = nil
		c.endTurnIfEmpty()
		return
	}
	o := c.sends.queue[0]
	c.sends.queue = c.sends.queue[1:]
	ctx, cancel := context.WithCancel(c.ctx())
	o.cancel = cancel
	c.sends.inFlight, c.sends.since = o, time.Now()
	c.b.goTracked(func() {
		if o.restart != nil {
			o.restart(ctx, sess)
		}
		var uuid runner.MessageUUID
		err := o.ready(ctx) // a download, a transcription (the phone module)
		if err == nil {
			uuid, err = sess.Send(ctx, o.input)
		}
		cancel()
		c.post(item{fn: func() { c.sendDone(sess, o, uuid, err) }})
	})
	time.AfterFunc(slotNoticeAfter, func() { c.post(item{fn: c.refreshSlotNotice}) })
}

// sendDone records a message the CLI now has, or tells the user why it
// does not, then hands over the next one.
func (c *Chat) sendDone(sess *runner.Session, o *Outgoing, uuid runner.MessageUUID, err error) {
	if c.sends.inFlight == o {
		c.sends.inFlight = nil
	}
	if err != nil || sess != c.sess || !c.adoptSlotNotice() { // slot_notice.go
		c.clearSlotNotice()
	}
	if o.deferred && err != nil {
		c.endTurnIfEmpty()
		return // its update stays unconfirmed: the next start hands it over
	}
	defer c.pump()
	defer c.finishOutgoing(o)
	switch {
	case err == nil && sess == c.sess:
		c.noteFirstPrompt(o) // projects.go
		c.userMsgs[uuid] = o.msgID
		c.inputs[uuid] = o
		c.sentOrder = append(c.sentOrder, uuid)
		return
	case err == nil:
		// /new replaced the session while this message was on its way: the
		// old session got it and is being closed.
		c.reply("⚠️ This message reached the session you just replaced. Send it again to start the new one with it.", o.msgID)
	case errors.Is(err, context.Canceled):
		c.reply("✖️ Not sent to Claude: cancelled while it waited.", o.msgID)
	case o.failed != nil && o.failed(err):
		// the module that prepared it answered (a transcription's 🔁 Retry)
	case o.resend:
		c.logger().Error().Err(err).Msg("re-send a queued message after the CLI stopped")
		if text, ok := missingText(err); ok { // world.go
			c.reply(text, o.msgID)
			break
		}
		c.reply(fmt.Sprintf("⚠️ Claude stopped before reading “%s”, and it could not be sent again: %s. Please send it again.",
			render.EscapeHTML(o.label), render.EscapeHTML(err.Error())), o.msgID)
	default:
		c.logger().Error().Err(err).Msg("send message to Claude")
		c.reply(c.sendErrorText(err), o.msgID)
	}
	c.endTurnIfEmpty()
}

// userTexter is an error whose text is for the user as it is (HTML), such
// as a file that could not be passed to Claude.
type userTexter interface {
	error
	UserText() string
}

// sendErrorText explains a failed hand-over.
func (c *Chat) sendErrorText(err error) string {
	if ue := userTexter(nil); errors.As(err, &ue) {
		return ue.UserText()
	}
	if errors.Is(err, runner.ErrWorkdirMissing) {
		return c.startErrorText(err) // projects.go: names the project and branch
	}
	if text, ok := missingText(err); ok { // the CLI or the workdir is gone (world.go)
		return text
	}
	return "⚠️ Could not send your message to Claude: " + render.EscapeHTML(err.Error())
}

// endTurnIfEmpty closes a turn opened for messages that never reached the
// CLI, so no progress message or typing is left that nothing serves.
func (c *Chat) endTurnIfEmpty() {
	if c.sends.inFlight != nil || len(c.sends.queue) > 0 {
		return
	}
	if t := c.turn; t != nil && !t.done && t.view.Steps == 0 && (c.sess == nil || c.sess.State() != runner.StateBusy) {
		c.finishProgress(t, true)
		c.turn = nil
	}
}

// settle runs o's settled callback now (o was refused before it was queued).
func (o *Outgoing) settle() {
	if o.settled != nil {
		o.settled()
		o.settled = nil
	}
}

// finishOutgoing confirms the message's update: it is either in the CLI's
// hands or the user has been told it is not.
func (c *Chat) finishOutgoing(o *Outgoing) {
	if o.updateID != 0 {
		c.b.finishUpdate(o.updateID)
		o.updateID = 0
	}
	o.settle()
}

// waitingForSlot reports whether the message on its way waits for a
// live-process slot (as opposed to starting or being written).
func (c *Chat) waitingForSlot() bool {
	pool := c.b.opts.Pool
	if c.sends.inFlight == nil || pool == nil || c.sess == nil {
		return false
	}
	return !pool.Holds(c.sess)
}

// cancelWaiting stops messages that have not reached the CLI yet (/cancel
// while waiting for a slot). It reports whether there were any.
func (c *Chat) cancelWaiting(replyTo int) bool {
	if c.sends.inFlight == nil && len(c.sends.queue) == 0 {
		return false
	}
	waiting := c.waitingForSlot()
	for _, o := range c.sends.queue {
		c.reply("✖️ Not sent to Claude: cancelled while it waited.", o.msgID)
		c.finishOutgoing(o)
	}
	c.sends.queue = nil
	if o := c.sends.inFlight; o != nil && o.cancel != nil && waiting {
		o.cancel() // sendDone tells the user and ends the turn
		return true
	}
	c.endTurnIfEmpty()
	return c.sends.inFlight == nil || waiting
}

// pendingSends counts messages not yet handed to the CLI.
func (c *Chat) pendingSends() int {
	n := len(c.sends.queue)
	if c.sends.inFlight != nil {
		n++
	}
	return n
}

// deferSends runs when a drain starts: messages still waiting for a live
// slot could hold the drain for as long as the slots stay busy, so they are
// left for the next start instead. Their updates stay unconfirmed, and the
// next start hands them over again (replayDeferred).
func (c *Chat) deferSends() {
	if !c.waitingForSlot() {
		return // already starting: it goes through, and the drain waits for it
	}
	waiting := append([]*Outgoing{c.sends.inFlight}, c.sends.queue...)
	c.sends.queue = nil
	for _, o := range waiting {
		o.deferred = true
		c.reply("⏸ untether is restarting. I will send this to Claude when I am back, in a moment.", o.msgID)
	}
	c.clearSlotNotice()
	c.sends.inFlight.cancel()
}

// ready runs an outgoing message's prepare step, if any, in the hand-over
// goroutine; afterwards o.input is what goes to the CLI (and what a
// re-send after a crash sends again).
func (o *Outgoing) ready(ctx context.Context) error {
	if o.prepare == nil {
		return nil
	}
	in, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	o.input, o.prepare = in, nil
	return nil
}

package chat

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/durable"
	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// item is one unit of a chat's mailbox: a Telegram message, a button press,
// or work posted back by one of the chat's own goroutines.
type item struct {
	updateID int64 // 0 for internal items
	msg      *models.Message
	press    *Press
	fn       func()
}

// Chat is the actor of one Telegram Chat (or forum topic). One goroutine
// owns everything below; other goroutines talk to it through post.
type Chat struct {
	b      *Engine
	key    state.ChatKey
	outKey outbox.ChatKey
	group  bool
	// log names the chat, and its session once there is one. A new
	// session (ensureSession) or a new chat id (rekey) stores a new one;
	// nothing changes one in place, so a goroutine may keep what it read.
	log atomic.Pointer[zerolog.Logger]

	boxMu  sync.Mutex
	box    []item
	boxAt  time.Time // when the oldest unhandled item was posted
	notify chan struct{}
	stopCh chan context.Context

	countMu          sync.Mutex
	running, pending int

	rec       state.Chat
	haveRec   bool
	sess      *runner.Session
	live      atomic.Pointer[runner.Session] // sess, readable off the actor
	dead      atomic.Bool                    // abandoned (tests simulate a crash)
	events    <-chan runner.Event
	book      *costBook // who pays for sess's turns (turn_costs.go)
	turn      *turn
	approvals map[string]*Approval // by token
	menus     map[string]*Menu     // choice menus (/mode, /model) by token
	byRequest map[runner.RequestID]string
	userMsgs  map[runner.MessageUUID]int // our message uuid → Telegram message id
	started   runner.MessageUUID         // the message whose turn started last

	// Messages on their way to the CLI (dispatch.go), and the ones it has
	// but has not answered yet, in the order they were written, so they
	// can be sent again if the CLI dies with them queued.
	sends     sendQueue
	inputs    map[runner.MessageUUID]*Outgoing
	sentOrder []runner.MessageUUID
	// sessPlace is where sess runs (projects.go); continueNext makes the
	// next session continue the directory's latest conversation
	// (/continue); promptNoted: the session's first prompt is kept.
	sessPlace Place
	// sessDir is the directory sess runs in on this machine ("" for a
	// project on another host): its outbox, uploads, /get and full diffs
	// use it while sess lives, since a config reload can move the chat's
	// place (placeFor) but not a running CLI.
	sessDir      string
	continueNext bool
	continued    bool // sess continued the directory's latest conversation
	// adoptID is a session started outside untether that /continue chose
	// (the places module's /continue): when the next session resumes it, its first
	// prompt was someone else's.
	adoptID     string
	promptNoted bool
	// curUpdate is the update of the mailbox item being handled; a handler
	// that finishes it later (a message handed to the CLI off the actor)
	// takes it.
	curUpdate int64

	slots []any // the modules' state in this chat (slot.go)
}

// Journal tags of the messages the bridge sends.
const (
	tagApproval = "approval:"
	tagFinal    = "final"
)

func newChat(b *Engine, key state.ChatKey, group bool) *Chat {
	c := &Chat{
		b: b, key: key, group: group,
		outKey:    outbox.ChatKey{Chat: int64(key.Chat), Thread: int(key.Thread)},
		notify:    make(chan struct{}, 1),
		stopCh:    make(chan context.Context, 1),
		approvals: map[string]*Approval{},
		byRequest: map[runner.RequestID]string{},
		userMsgs:  map[runner.MessageUUID]int{},
		inputs:    map[runner.MessageUUID]*Outgoing{},
	}
	log := b.log.With().Str("chat", key.String()).Logger()
	c.log.Store(&log)
	return c
}

// post queues an item; it never blocks, so the update worker never waits
// on a busy chat.
func (c *Chat) post(it item) {
	c.boxMu.Lock()
	if len(c.box) == 0 {
		c.boxAt = time.Now()
	}
	c.box = append(c.box, it)
	c.boxMu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// stalledSince is when the chat's oldest unhandled item was posted (or the
// previous item was taken), zero when the mailbox is empty.
func (c *Chat) stalledSince() time.Time {
	c.boxMu.Lock()
	defer c.boxMu.Unlock()
	return c.boxAt
}

func (c *Chat) counts() (running, pending int) {
	c.countMu.Lock()
	defer c.countMu.Unlock()
	return c.running, c.pending
}

func (c *Chat) updateCounts() {
	r := 0
	if c.turn != nil && !c.turn.done {
		r = 1
	}
	c.countMu.Lock()
	c.running, c.pending = r, len(c.approvals)
	c.countMu.Unlock()
}

func (c *Chat) shutdown(ctx context.Context) {
	select {
	case c.stopCh <- ctx:
	default:
	}
}

// logger is the chat's logger (see log).
func (c *Chat) logger() *zerolog.Logger { return c.log.Load() }

func (c *Chat) ctx() context.Context {
	// The key tells a refused state write which chat it puts at risk.
	return durable.WithChatKey(c.logger().WithContext(context.WithoutCancel(c.b.runCtx)), c.key)
}

func (c *Chat) run(ctx context.Context) {
	interval := c.b.Config().Progress.IntervalFor(c.group)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// The ticker only runs while there is something to refresh (a turn's
	// progress, typing, approval deadlines): an idle chat costs no wakeups.
	ticking := true
	// A drain (stop) lets the running turn finish, answers included, with
	// the chat fully working (button presses still arrive). When the drain
	// time is up the turn is interrupted, and if even that does not end it,
	// the process is closed hard.
	var (
		stopping    bool
		drainUp     <-chan struct{}
		hardStop    <-chan time.Time
		interrupted bool
	)
	for !c.dead.Load() {
		if stopping && !c.busy() {
			c.closeSession()
			return
		}
		if active := c.needsTick(); active != ticking {
			ticking = active
			if active {
				tick.Reset(interval)
			} else {
				tick.Stop()
			}
		}
		select {
		case <-c.notify:
			c.drainBox()
		case ev, ok := <-c.events:
			if !ok {
				c.events = nil
				continue
			}
			if c.dead.Load() {
				return
			}
			c.safely("event", func() { c.onEvent(ev) })
		case now := <-tick.C:
			if c.dead.Load() {
				return
			}
			c.safely("tick", func() { c.onTick(now) })
			if iv := c.b.Config().Progress.IntervalFor(c.group); iv != interval { // reloaded
				interval = iv
				tick.Reset(iv)
			}
		case stopCtx := <-c.stopCh:
			stopping, drainUp = true, stopCtx.Done()
			c.drainBox()
			c.safely("drain", c.releaseHumanWaits)
			c.safely("drain", c.deferSends)
		case <-drainUp:
			drainUp = nil
			if !interrupted && c.busy() {
				interrupted = true
				c.reply("⏸ untether is restarting and could not wait for this turn any longer, so it was stopped. Send a message to continue; the session resumes.", c.replyTarget())
				c.stoppedForRestart() // drain.go
				c.cancelTurn()
				hardStop = time.After(min(3*c.b.Config().Claude.StopTimeout.Std(), 5*time.Second))
			}
		case <-hardStop:
			c.closeSession()
			return
		}
	}
}

// needsTick reports whether onTick has anything to do.
func (c *Chat) needsTick() bool {
	return len(c.approvals) > 0 || (c.turn != nil && !c.turn.done) || c.sends.inFlight != nil
}

// takeUpdate hands the current mailbox item's update to a handler that will
// finish it later; drainBox then leaves it unconfirmed.
func (c *Chat) takeUpdate() int64 {
	id := c.curUpdate
	c.curUpdate = 0
	return id
}

// busy reports whether a turn or an approval is still open.
func (c *Chat) busy() bool {
	if len(c.approvals) > 0 || c.pendingSends() > 0 {
		return true
	}
	if c.turn != nil && !c.turn.done {
		return true
	}
	if c.sess != nil {
		switch c.sess.State() {
		case runner.StateBusy, runner.StateApproval, runner.StateStarting:
			return true
		}
	}
	return false
}

func (c *Chat) replyTarget() int {
	if c.turn != nil {
		return c.turn.replyTo
	}
	return 0
}

func (c *Chat) drainBox() {
	for !c.dead.Load() {
		c.boxMu.Lock()
		if len(c.box) == 0 {
			c.boxAt = time.Time{}
			c.boxMu.Unlock()
			return
		}
		it := c.box[0]
		c.box = c.box[1:]
		c.boxAt = time.Now() // the next item's wait starts now
		c.boxMu.Unlock()
		c.curUpdate = it.updateID
		c.safely("mailbox", func() { c.handle(it) })
		if c.curUpdate != 0 {
			c.b.finishUpdate(c.curUpdate)
		}
		c.curUpdate = 0
	}
}

// safely recovers a panic so one chat can never take the daemon down.
func (c *Chat) safely(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.logger().Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("in", what).Msg("recovered panic in chat")
		}
	}()
	fn()
}

func (c *Chat) handle(it item) {
	switch {
	case it.fn != nil:
		it.fn()
	case it.msg != nil:
		c.leaveClosedProject() // projects_allowed.go
		c.onMessage(it.msg)
	case it.press != nil:
		c.leaveClosedProject()
		if h, ok := c.b.reg.buttons[it.press.Kind]; ok {
			h.Press(c, *it.press)
		}
	}
	c.updateCounts()
}

// reply sends an HTML notice at high priority.
func (c *Chat) reply(html string, replyTo int) *outbox.Message {
	return c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
}

func (c *Chat) onMessage(m *models.Message) {
	// A message from the chat shows the bot can reach it again (a user who
	// had blocked the bot wrote to it): forget the outbox's 403 verdict, or
	// the answer would be dropped until the cooldown ends.
	c.b.out.Unblock(int64(c.key.Chat))
	if cmd, ok := ingress.ParseCommand(m.Text, m.Entities, c.b.botUsername); ok {
		c.onCommand(cmd, m)
		return
	}
	if c.answerByReply(m) { // a reply to an open question answers it (questions.go)
		return
	}
	c.onContent(m)
}

// onContent hands what a user wrote to the modules' hooks (a collected
// album, a voice note, files) and else to Claude.
func (c *Chat) onContent(m *models.Message) {
	in := &Inbound{Msg: m}
	for _, h := range c.b.reg.onMessage { // the modules' hooks, in modules.go's order
		if h(c, in) {
			return
		}
	}
	if in.Quoted != nil {
		m = in.Quoted
	}
	if m.Text == "" {
		c.reply("Send text, a photo, a file or a voice note; this kind of message is not supported.", m.ID)
		return
	}
	c.send(runner.UserInput{Text: m.Text}, m.ID, SenderOf(m))
}

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// item is one unit of a chat's mailbox: a Telegram message, a button press,
// or work posted back by one of the chat's own goroutines.
type item struct {
	updateID int64 // 0 for internal items
	msg      *models.Message
	press    *press
	fn       func()
}

type press struct {
	kind  buttonKind
	token string
	arg   int
	from  models.User
}

// chat is the actor of one Telegram chat (or forum topic). One goroutine
// owns everything below; other goroutines talk to it through post.
type chat struct {
	b      *Bridge
	key    state.ChatKey
	outKey outbox.ChatKey
	group  bool
	log    zerolog.Logger

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
	turn      *turn
	approvals map[string]*approval // by token
	byRequest map[runner.RequestID]string
	userMsgs  map[runner.MessageUUID]int // our message uuid → Telegram message id
	started   runner.MessageUUID         // the message whose turn started last
}

// Journal tags of the messages the bridge sends.
const (
	tagApproval = "approval:"
	tagFinal    = "final"
)

// turn is the bridge's side of one CLI turn: its progress message.
type turn struct {
	view        *render.Turn
	progress    *outbox.Message
	progressID  state.MessageID
	cancelToken string
	replyTo     int
	lastFP      uint64
	lastRender  time.Time
	done        bool
	cancelled   bool
}

// approval is a pending can_use_tool request shown with buttons.
type approval struct {
	token    string
	req      runner.ApprovalRequested
	msg      *outbox.Message
	deadline time.Time
	answers  map[string]string // AskUserQuestion: question → chosen label
	options  []optionRef       // button index → question/label
	sess     *runner.Session
}

type optionRef struct{ question, label string }

func newChat(b *Bridge, key state.ChatKey, group bool) *chat {
	return &chat{
		b: b, key: key, group: group,
		outKey:    outbox.ChatKey{Chat: int64(key.Chat), Thread: int(key.Thread)},
		log:       b.log.With().Str("chat", key.String()).Logger(),
		notify:    make(chan struct{}, 1),
		stopCh:    make(chan context.Context, 1),
		approvals: map[string]*approval{},
		byRequest: map[runner.RequestID]string{},
		userMsgs:  map[runner.MessageUUID]int{},
	}
}

// post queues an item; it never blocks, so the update worker never waits
// on a busy chat.
func (c *chat) post(it item) {
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
func (c *chat) stalledSince() time.Time {
	c.boxMu.Lock()
	defer c.boxMu.Unlock()
	return c.boxAt
}

func (c *chat) counts() (running, pending int) {
	c.countMu.Lock()
	defer c.countMu.Unlock()
	return c.running, c.pending
}

func (c *chat) updateCounts() {
	r := 0
	if c.turn != nil && !c.turn.done {
		r = 1
	}
	c.countMu.Lock()
	c.running, c.pending = r, len(c.approvals)
	c.countMu.Unlock()
}

func (c *chat) shutdown(ctx context.Context) {
	select {
	case c.stopCh <- ctx:
	default:
	}
}

func (c *chat) ctx() context.Context {
	return c.log.WithContext(context.WithoutCancel(c.b.runCtx))
}

func (c *chat) run(ctx context.Context) {
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
		case <-drainUp:
			drainUp = nil
			if !interrupted && c.busy() {
				interrupted = true
				c.reply("⏸ untether is restarting and could not wait for this turn any longer, so it was stopped. Send a message to continue; the session resumes.", c.replyTarget())
				c.cancelTurn()
				hardStop = time.After(3 * c.b.Config().Claude.StopTimeout.Std())
			}
		case <-hardStop:
			c.closeSession()
			return
		}
	}
}

// needsTick reports whether onTick has anything to do.
func (c *chat) needsTick() bool {
	return len(c.approvals) > 0 || (c.turn != nil && !c.turn.done)
}

// busy reports whether a turn or an approval is still open.
func (c *chat) busy() bool {
	if len(c.approvals) > 0 {
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

func (c *chat) replyTarget() int {
	if c.turn != nil {
		return c.turn.replyTo
	}
	return 0
}

// closeSession ends the session's process, handling its last events.
func (c *chat) closeSession() {
	if c.sess == nil {
		return
	}
	sess := c.sess
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*c.b.Config().Claude.StopTimeout.Std())
		defer cancel()
		closed <- sess.Close(ctx)
	}()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.events = nil
				continue
			}
			c.safely("event", func() { c.onEvent(ev) })
		case err := <-closed:
			if err != nil {
				c.log.Warn().Err(err).Msg("close session")
			}
			if c.events != nil {
				for ev := range c.events {
					c.safely("event", func() { c.onEvent(ev) })
				}
			}
			return
		}
	}
}

func (c *chat) drainBox() {
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
		c.safely("mailbox", func() { c.handle(it) })
		if it.updateID != 0 {
			c.b.finishUpdate(it.updateID)
		}
	}
}

// safely recovers a panic so one chat can never take the daemon down.
func (c *chat) safely(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Str("in", what).Msg("recovered panic in chat")
		}
	}()
	fn()
}

func (c *chat) handle(it item) {
	switch {
	case it.fn != nil:
		it.fn()
	case it.msg != nil:
		c.onMessage(it.msg)
	case it.press != nil:
		c.onPress(it.press)
	}
	c.updateCounts()
}

// reply sends an HTML notice at high priority.
func (c *chat) reply(html string, replyTo int) *outbox.Message {
	return c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
}

func (c *chat) record() state.Chat {
	if !c.haveRec {
		rec, err := c.b.store.GetChat(c.ctx(), c.key)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			c.log.Error().Err(err).Msg("read chat state")
		}
		rec.Key = c.key
		c.rec, c.haveRec = rec, true
	}
	return c.rec
}

func (c *chat) saveRecord() {
	c.rec.LastActive = time.Now()
	if err := c.b.store.PutChat(c.ctx(), c.rec); err != nil {
		c.log.Error().Err(err).Msg("save chat state")
	}
}

func (c *chat) onMessage(m *models.Message) {
	if cmd, ok := parseCommand(m.Text, m.Entities, c.b.botUsername); ok {
		c.onCommand(cmd, m)
		return
	}
	if len(m.Photo) > 0 || m.Document != nil {
		workdir := c.record().Workdir
		if workdir == "" {
			workdir = c.b.Config().Claude.Workdir
		}
		in, err := c.attachmentInput(m, workdir)
		if err != nil {
			c.log.Warn().Err(err).Msg("attachment")
			c.reply("⚠️ Could not pass this file to Claude: "+render.EscapeHTML(err.Error()), m.ID)
			return
		}
		c.send(in, m.ID)
		return
	}
	if m.Text == "" {
		c.reply("Send text, a photo or a file; this kind of message is not supported.", m.ID)
		return
	}
	c.send(runner.UserInput{Text: m.Text}, m.ID)
}

func (c *chat) ensureSession() (*runner.Session, error) {
	if c.sess != nil {
		return c.sess, nil
	}
	cfg := c.b.Config()
	rec := c.record()
	mode := runner.PermissionMode(cfg.Claude.PermissionMode)
	if rec.PermissionMode != "" {
		mode = runner.PermissionMode(rec.PermissionMode)
	}
	model := cfg.Claude.Model
	if rec.Model != "" {
		model = rec.Model
	}
	workdir := cfg.Claude.Workdir
	if rec.Workdir != "" {
		workdir = rec.Workdir
	}
	env := map[string]string{}
	for k, v := range cfg.Claude.Env {
		env[k] = v
	}
	if cfg.Claude.Home != "" {
		env["HOME"] = cfg.Claude.Home
	}
	sess, err := runner.NewSession(runner.Config{
		Binary: cfg.Claude.Binary, Workdir: workdir, PermissionMode: mode, Model: model,
		ExtraArgs: cfg.Claude.ExtraArgs, Env: env, InheritEnv: c.b.opts.InheritEnv,
		IncludePartialMessages: true,
		IdleTimeout:            cfg.Claude.IdleTimeout.Std(), StopTimeout: cfg.Claude.StopTimeout.Std(),
		Pool: c.b.opts.Pool, Logger: c.log,
	}, runner.SessionID(rec.SessionID), rec.SessionID != "", 0)
	if err != nil {
		return nil, err
	}
	c.sess, c.events = sess, sess.Events()
	c.live.Store(sess)
	c.rec.SessionID = string(sess.ID())
	c.rec.PermissionMode = string(mode)
	c.rec.Model = model
	c.rec.Workdir = workdir
	c.saveRecord()
	c.log = c.b.log.With().Str("chat", c.key.String()).Str("session", string(sess.ID())).Logger()
	return sess, nil
}

// prewarm starts this chat's CLI before its first message (off the actor:
// the start waits for the spawn limiter).
func (c *chat) prewarm() {
	sess, err := c.ensureSession()
	if err != nil {
		c.log.Warn().Err(err).Msg("prewarm session")
		return
	}
	go func() {
		if err := sess.Prewarm(c.ctx()); err != nil {
			c.log.Info().Err(err).Msg("prewarm CLI")
		}
	}()
}

func (c *chat) sendToClaude(text string, msgID int) {
	c.send(runner.UserInput{Text: text}, msgID)
}

func (c *chat) send(input runner.UserInput, msgID int) {
	sess, err := c.ensureSession()
	if err != nil {
		c.log.Error().Err(err).Msg("create session")
		c.reply("⚠️ Could not start Claude: "+render.EscapeHTML(err.Error()), msgID)
		return
	}
	if c.turn == nil || c.turn.done {
		c.startTurn(msgID)
	}
	uuid, err := sess.Send(c.ctx(), input)
	if err != nil {
		c.log.Error().Err(err).Msg("send message to Claude")
		c.reply("⚠️ Could not send your message to Claude: "+render.EscapeHTML(err.Error()), msgID)
		if c.turn != nil && !c.turn.done && c.turn.view.Steps == 0 {
			c.finishProgress(c.turn, true)
			c.turn = nil
		}
		return
	}
	c.userMsgs[uuid] = msgID
}

// progressShowAfter is how long a turn runs before it gets a progress
// message. A quick answer then costs one message (plus the typing
// indicator, sent at once) instead of a progress message, its edits and
// the answer; anything slower shows its progress within about a second.
const progressShowAfter = 800 * time.Millisecond

// startTurn begins tracking a turn; the typing indicator is the immediate
// feedback, the progress message follows if the turn takes a while.
func (c *chat) startTurn(replyTo int) {
	now := time.Now()
	t := &turn{view: render.NewTurn(now), cancelToken: newToken(), replyTo: replyTo}
	c.b.registerButton(t.cancelToken, c.key)
	if c.sess != nil {
		t.view.Model, t.view.Mode = c.sess.Model(), c.sess.PermissionMode()
	}
	c.turn = t
	if c.b.Config().Progress.Typing {
		c.b.out.Typing(c.ctx(), c.outKey)
	}
	// On time, not on the next tick: a streamed answer should be visible
	// within about a second of the model starting.
	time.AfterFunc(progressShowAfter, func() {
		c.post(item{fn: func() {
			if c.turn == t && !t.done && t.progress == nil {
				c.showProgress(t, time.Now())
			}
		}})
	})
}

// showProgress sends the turn's progress message.
func (c *chat) showProgress(t *turn, now time.Time) {
	html, kb := render.RenderProgress(t.view, c.progressOptions(t, now))
	t.progress = c.b.out.Send(c.ctx(), c.outKey, outbox.Low, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(t.replyTo), Silent: true, Tag: "progress"})
	t.lastFP, t.lastRender = t.view.Fingerprint(), now
	// The live record is written as soon as the message exists, off the
	// actor, so a crash right after the send still leaves a record for the
	// next start to reconcile; the actor then learns the id.
	key, progress := c.key, t.progress
	go func() {
		res, err := progress.Sent().Wait(context.WithoutCancel(c.b.runCtx))
		if err != nil {
			return
		}
		id := state.MessageID(res.MessageID)
		if err := c.b.store.AddLive(c.ctx(), state.LiveMessage{Key: key, MessageID: id,
			Kind: state.LiveProgress, Ref: t.cancelToken, CreatedAt: now}); err != nil {
			c.log.Error().Err(err).Msg("record live progress message")
		}
		c.post(item{fn: func() {
			t.progressID = id
			if t.done { // finished before the record landed
				_ = c.b.store.RemoveLive(c.ctx(), key, id)
			}
		}})
	}()
}

func (c *chat) progressOptions(t *turn, now time.Time) render.ProgressOptions {
	cfg := c.b.Config()
	o := render.ProgressOptions{MaxRows: cfg.Progress.MaxRows, Verbose: cfg.Progress.Verbose, Now: now}
	if !t.done {
		o.CancelData = callbackData(btnCancel, t.cancelToken, 0)
	}
	return o
}

func (c *chat) onTick(now time.Time) {
	t := c.turn
	if t != nil && !t.done {
		switch {
		case t.progress == nil:
			if now.Sub(t.view.StartedAt) >= progressShowAfter {
				c.showProgress(t, now)
			}
		// Re-render on change, and every few seconds anyway so the elapsed
		// clock moves during a long tool call.
		case t.view.Fingerprint() != t.lastFP || now.Sub(t.lastRender) >= 5*time.Second:
			c.renderProgress(t, now)
		}
		if c.b.Config().Progress.Typing && t.view.PendingApprovals() == 0 {
			c.b.out.Typing(c.ctx(), c.outKey)
		}
	}
	for _, a := range c.approvals {
		if now.After(a.deadline) {
			c.expireApproval(a)
		}
	}
}

func (c *chat) renderProgress(t *turn, now time.Time) {
	html, kb := render.RenderProgress(t.view, c.progressOptions(t, now))
	c.b.out.Edit(c.ctx(), t.progress, outbox.Low, outbox.Content{Text: html, Keyboard: kb})
	t.lastFP, t.lastRender = t.view.Fingerprint(), now
}

// finishProgress shows the turn's final state in (or deletes) its progress
// message and forgets it as live.
func (c *chat) finishProgress(t *turn, failed bool) {
	t.done = true
	c.b.forgetButton(t.cancelToken)
	if t.progress == nil {
		return // the turn ended before it needed one
	}
	now := time.Now()
	if c.b.Config().Progress.OnFinish == "delete" && !failed {
		c.b.out.Delete(c.ctx(), t.progress, outbox.Low)
	} else {
		html := render.RenderProgressFinal(t.view, c.progressOptions(t, now))
		c.b.out.Edit(c.ctx(), t.progress, outbox.Low, outbox.Content{Text: html})
	}
	if t.progressID != 0 {
		if err := c.b.store.RemoveLive(c.ctx(), c.key, t.progressID); err != nil {
			c.log.Error().Err(err).Msg("forget live progress message")
		}
	}
}

func (c *chat) onEvent(ev runner.Event) {
	now := time.Now()
	switch e := ev.(type) {
	case runner.MessageLifecycle:
		if e.State == runner.MessageStarted {
			c.started = e.UUID
		}
	case runner.TurnStarted:
		if c.turn == nil || c.turn.done {
			c.startTurn(c.userMsgs[c.started])
		}
		if string(e.SessionID) != c.rec.SessionID && e.SessionID != "" {
			c.rec.SessionID = string(e.SessionID)
			c.saveRecord()
		}
	case runner.ApprovalRequested:
		c.requestApproval(e)
	case runner.ApprovalWithdrawn:
		if tok, ok := c.byRequest[e.RequestID]; ok {
			c.closeApproval(c.approvals[tok], state.DecisionWithdrawn, render.DecisionWithdrawn, nil, "")
		}
	case runner.SessionRestarted:
		c.rec.SessionID = string(e.Current)
		c.saveRecord()
		c.reply("ℹ️ The previous conversation could not be resumed, so Claude started a new session.", 0)
	case runner.ProcessExited:
		c.onExit(e)
		return
	}
	if c.turn != nil && !c.turn.done {
		c.turn.view.Apply(ev, now)
	}
	if tc, ok := ev.(runner.TurnCompleted); ok {
		c.onTurnCompleted(tc)
	}
	c.updateCounts()
}

func (c *chat) onTurnCompleted(tc runner.TurnCompleted) {
	t := c.turn
	replyTo := 0
	if t != nil {
		replyTo = t.replyTo
	}
	for _, u := range tc.Messages {
		if id, ok := c.userMsgs[u]; ok {
			replyTo = id
			break
		}
	}
	for _, u := range tc.Messages {
		delete(c.userMsgs, u)
	}
	// A result the CLI wrote for a notification it folded into another
	// (no model call, no text) carries nothing to show.
	silent := tc.NumTurns == 0 && tc.Answer == "" && tc.Origin != "" && tc.OK
	if !silent {
		model := ""
		if t != nil {
			model = t.view.Model
		}
		chunks := render.RenderFinal(tc, render.FinalMeta{Duration: tc.Duration, CostUSD: tc.CostUSD,
			ContextPercent: tc.ContextPercent, Model: model})
		for i, chunk := range chunks {
			opts := outbox.SendOptions{Tag: tagFinal}
			if i == 0 {
				opts.ReplyTo = outbox.MessageID(replyTo)
			}
			c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: chunk}, opts)
		}
	}
	if t != nil && !t.done {
		c.finishProgress(t, !tc.OK)
	}
	rec := state.TurnRecord{Key: c.key, SessionID: string(tc.SessionID), Duration: tc.Duration, CostUSD: tc.CostUSD,
		ContextPct: tc.ContextPercent, OK: tc.OK, TerminalReason: tc.TerminalReason}
	if t != nil {
		rec.StartedAt = t.view.StartedAt
	}
	if err := c.b.store.RecordTurn(c.ctx(), rec); err != nil {
		c.log.Error().Err(err).Msg("record turn")
	}
	c.rec.CostUSD += tc.CostUSD
	c.rec.Turns++
}

func (c *chat) onExit(e runner.ProcessExited) {
	t := c.turn
	if t != nil && !t.done {
		t.view.Apply(e, time.Now())
		if !e.Requested || t.cancelled {
			c.reply(render.RenderCrash(e), t.replyTo)
		}
		c.finishProgress(t, true)
	}
	c.updateCounts()
}

func (c *chat) onPress(p *press) {
	switch p.kind {
	case btnCancel:
		if c.turn != nil && c.turn.cancelToken == p.token && !c.turn.done {
			c.cancelTurn()
		}
	default:
		a, ok := c.approvals[p.token]
		if !ok {
			return
		}
		c.decide(a, p)
	}
}

// cancelTurn interrupts the running turn off the actor: Interrupt waits for
// the turn to end, which needs the actor to keep consuming events.
func (c *chat) cancelTurn() {
	sess := c.sess
	if sess == nil {
		return
	}
	if c.turn != nil {
		c.turn.cancelled = true
	}
	go func() {
		if err := sess.Interrupt(c.ctx()); err != nil {
			c.log.Warn().Err(err).Msg("interrupt")
		}
	}()
}

func (c *chat) requestApproval(req runner.ApprovalRequested) {
	cfg := c.b.Config()
	now := time.Now()
	a := &approval{token: newToken(), req: req, deadline: now.Add(cfg.Claude.ApprovalTimeout.Std()),
		answers: map[string]string{}, sess: c.sess}
	buttons := render.ApprovalButtons{
		Approve: callbackData(btnApprove, a.token, 0),
		Deny:    callbackData(btnDeny, a.token, 0),
		Always:  callbackData(btnAlways, a.token, 0),
	}
	for _, q := range req.Questions {
		for _, o := range q.Options {
			buttons.Options = append(buttons.Options, callbackData(btnOption, a.token, len(a.options)))
			a.options = append(a.options, optionRef{question: q.Question, label: o.Label})
		}
	}
	html, kb := render.RenderApproval(req, buttons)
	// Recorded before the message exists, so a press after a crash finds
	// the request (and learns that it expired).
	if err := c.b.store.PutApproval(c.ctx(), state.Approval{Token: a.token, Key: c.key, RequestID: string(req.RequestID),
		SessionID: c.rec.SessionID, Tool: req.Tool, Summary: req.Summary, InputJSON: req.Input,
		Suggestions: req.Suggestions, CreatedAt: now, ExpiresAt: a.deadline}); err != nil {
		c.log.Error().Err(err).Msg("record approval")
	}
	c.approvals[a.token] = a
	c.byRequest[req.RequestID] = a.token
	c.b.registerButton(a.token, c.key)
	replyTo := 0
	if c.turn != nil {
		replyTo = c.turn.replyTo
	}
	a.msg = c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagApproval + a.token})
	// The message id is stored as soon as it exists (off the actor): after
	// a crash, reconciliation finds the pending approval and its message.
	go func() {
		res, err := a.msg.Sent().Wait(context.WithoutCancel(c.b.runCtx))
		if err != nil {
			return
		}
		if err := c.b.store.SetApprovalMessage(c.ctx(), a.token, state.MessageID(res.MessageID)); err != nil {
			c.log.Error().Err(err).Msg("record approval message")
		}
	}()
}

func userName(u models.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = fmt.Sprint(u.ID)
	}
	return name
}

// decide applies a button press to a pending approval.
func (c *chat) decide(a *approval, p *press) {
	var (
		d       runner.Decision
		outcome render.Decision
		stDec   state.Decision
		note    string
	)
	plan := a.req.Tool == "ExitPlanMode"
	switch p.kind {
	case btnApprove:
		d, outcome, stDec = runner.Decision{Behavior: runner.Allow}, render.DecisionApproved, state.DecisionAllow
	case btnDeny:
		msg := "The user denied this action from Telegram."
		if plan {
			msg = "The user wants to keep planning; revise the plan."
		}
		d, outcome, stDec = runner.Decision{Behavior: runner.Deny, Message: msg}, render.DecisionDenied, state.DecisionDeny
	case btnAlways:
		d = runner.Decision{Behavior: runner.Allow, UpdatedPermissions: a.req.Suggestions}
		outcome, stDec = render.DecisionAlwaysAllowed, state.DecisionAlways
	case btnOption:
		if p.arg >= len(a.options) {
			return
		}
		opt := a.options[p.arg]
		a.answers[opt.question] = opt.label
		if len(a.answers) < len(a.req.Questions) {
			return // wait until every question has an answer
		}
		input := map[string]any{}
		_ = json.Unmarshal(a.req.Input, &input)
		input["answers"] = a.answers
		updated, err := json.Marshal(input)
		if err != nil {
			c.log.Error().Err(err).Msg("encode answers")
			return
		}
		labels := make([]string, 0, len(a.answers))
		for _, q := range a.req.Questions {
			labels = append(labels, a.answers[q.Question])
		}
		note = strings.Join(labels, ", ")
		d, outcome, stDec = runner.Decision{Behavior: runner.Allow, UpdatedInput: updated}, render.Answered(note), state.DecisionAnswer
	default:
		return
	}
	if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, state.UserID(p.from.ID), time.Now(), note); err != nil {
		if errors.Is(err, state.ErrAlreadyDecided) {
			return // another press won
		}
		c.log.Error().Err(err).Msg("record approval decision")
	}
	if err := a.sess.Respond(a.req.RequestID, d); err != nil {
		c.log.Warn().Err(err).Msg("answer approval")
		if errors.Is(err, runner.ErrUnknownRequest) {
			outcome = render.DecisionWithdrawn
		}
	}
	by := userName(p.from)
	c.closeApproval(a, "", outcome, &by, note)
	if c.turn != nil {
		c.turn.view.Resolve(a.req.RequestID)
	}
}

// closeApproval edits the approval message to its outcome, removes its
// buttons and forgets it. stDec, when set, is recorded (for outcomes no
// user chose: withdrawn, expired).
func (c *chat) closeApproval(a *approval, stDec state.Decision, outcome render.Decision, by *string, note string) {
	if a == nil {
		return
	}
	now := time.Now()
	if stDec != "" {
		if err := c.b.store.DecideApproval(c.ctx(), a.token, stDec, 0, now, note); err != nil && !errors.Is(err, state.ErrAlreadyDecided) {
			c.log.Error().Err(err).Msg("record approval outcome")
		}
	}
	who := ""
	if by != nil {
		who = *by
	}
	html := render.RenderApprovalDecided(a.req, outcome, who, now)
	c.b.out.Edit(c.ctx(), a.msg, outbox.High, outbox.Content{Text: html})
	delete(c.approvals, a.token)
	delete(c.byRequest, a.req.RequestID)
	c.b.forgetButton(a.token)
	c.updateCounts()
}

func (c *chat) expireApproval(a *approval) {
	if err := a.sess.Respond(a.req.RequestID, runner.Decision{Behavior: runner.Deny,
		Message: "Nobody answered this request in time, so it was denied."}); err != nil {
		c.log.Info().Err(err).Msg("deny expired approval")
	}
	c.closeApproval(a, state.DecisionExpired, render.DecisionExpired, nil, "approval timeout")
	if c.turn != nil {
		c.turn.view.Resolve(a.req.RequestID)
	}
}

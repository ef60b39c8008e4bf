package chat

import (
	"context"
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// turn is the bridge's side of one CLI turn: its progress message.
type turn struct {
	view        *render.Turn
	progress    *outbox.Message
	live        liveRecord // the progress message's record for reconciliation
	cancelToken string
	replyTo     int
	lastFP      uint64
	lastRender  time.Time
	done        bool
	cancelled   bool
	stall       stall
	lastStall   string      // the stall line of the latest render
	notes       []string    // the turn's own lines in its progress and answer (a scheduled run's)
	draft       draftStream // the answer streamed as a draft (draft.go)
	// workdir is where the turn's CLI runs on this machine ("" on another
	// host): its outbox is delivered from there even when the CLI dies
	// before the turn's result.
	workdir string
}

// progressShowAfter is how long a turn runs before it gets a progress
// message. A quick answer then costs one message (plus the typing
// indicator, sent at once) instead of a progress message, its edits and
// the answer; anything slower shows its progress within about a second.
const progressShowAfter = 800 * time.Millisecond

// startTurn begins tracking a turn; the typing indicator is the immediate
// feedback, the progress message follows if the turn takes a while.
func (c *Chat) startTurn(replyTo int) {
	now := time.Now()
	t := &turn{view: render.NewTurn(now), cancelToken: NewToken(), replyTo: replyTo, workdir: c.uploadDir(c.b.Config())}
	c.b.registerButton(t.cancelToken, c.key)
	if c.sess != nil {
		t.view.Model, t.view.Mode = c.sess.Model(), c.sess.PermissionMode()
	}
	t.view.Project = c.ranLabel(c.b.Config()) // projects.go
	c.turn = t
	if c.b.Config().Progress.Typing {
		c.b.out.Typing(c.ctx(), c.outKey)
	}
	// On time, not on the next tick: a streamed answer should be visible
	// within about a second of the model starting.
	time.AfterFunc(progressShowAfter, func() {
		c.post(item{fn: func() {
			if c.turn == t && !t.done && t.progress == nil && !c.waitingForSlot() && !c.adoptSlotNotice() {
				c.showProgress(t, time.Now())
			}
		}})
	})
}

// showProgress sends the turn's progress message.
func (c *Chat) showProgress(t *turn, now time.Time) {
	html, kb := render.RenderProgress(t.view, c.progressOptions(t, now))
	t.progress = c.b.out.Send(c.ctx(), c.outKey, outbox.Low, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(t.replyTo), Silent: true, Tag: TagProgress})
	t.lastFP, t.lastRender = c.progressFingerprint(t), now
	c.recordLiveProgress(t, now)
}

// recordLiveProgress writes the live record of the turn's progress message
// as soon as the message exists, off the actor, so a crash right after the
// send still leaves a record for the next start to reconcile; the actor
// then learns the id.
func (c *Chat) recordLiveProgress(t *turn, now time.Time) {
	key, progress := c.key, t.progress
	ctx, log := c.ctx(), c.logger()
	c.b.goTracked(func() {
		res, err := progress.Sent().Wait(context.WithoutCancel(c.b.runCtx))
		if err != nil {
			return
		}
		id := state.MessageID(res.MessageID)
		if err := c.b.store.AddLive(ctx, state.LiveMessage{Key: key, MessageID: id,
			Kind: state.LiveProgress, Ref: t.cancelToken, CreatedAt: now}); err != nil {
			log.Error().Err(err).Msg("record live progress message")
		}
		if t.live.added(id) { // the turn ended before the record landed
			_ = c.b.store.RemoveLive(ctx, key, id)
		}
	})
}

func (c *Chat) progressOptions(t *turn, now time.Time) render.ProgressOptions {
	cfg := c.b.Config()
	o := render.ProgressOptions{MaxRows: cfg.Progress.MaxRows, Verbose: cfg.Progress.Verbose, Now: now, Notes: t.notes,
		HideText: c.drafting(t)}
	if !t.done {
		o.CancelData = CallbackData(btnCancel, t.cancelToken)
		o.Stall = c.stallNote(t, now)
	}
	return o
}

func (c *Chat) onTick(now time.Time) {
	c.refreshSlotNotice()
	t := c.turn
	if t != nil && !t.done && !c.waitingForSlot() {
		switch {
		case t.progress == nil:
			if now.Sub(t.view.StartedAt) >= progressShowAfter && !c.adoptSlotNotice() { // slot_notice.go
				c.showProgress(t, now)
			}
		// Re-render on change, and every few seconds anyway so the elapsed
		// clock moves during a long tool call.
		case c.progressFingerprint(t) != t.lastFP || now.Sub(t.lastRender) >= 5*time.Second || c.stallNote(t, now) != t.lastStall:
			c.renderProgress(t, now)
		}
		if c.b.Config().Progress.Typing && t.view.PendingApprovals() == 0 && !t.draft.live() {
			c.b.out.Typing(c.ctx(), c.outKey)
		}
		c.checkStall(t, now)
	}
	for _, a := range c.approvals {
		if now.After(a.deadline) {
			c.expireApproval(a)
		}
	}
}

func (c *Chat) renderProgress(t *turn, now time.Time) {
	o := c.progressOptions(t, now)
	html, kb := render.RenderProgress(t.view, o)
	c.b.out.Edit(c.ctx(), t.progress, outbox.Low, outbox.Content{Text: html, Keyboard: kb})
	t.lastFP, t.lastRender, t.lastStall = c.progressFingerprint(t), now, o.Stall
}

// finishProgress shows the turn's final state in (or deletes) its progress
// message and forgets it as live.
func (c *Chat) finishProgress(t *turn, failed bool) {
	t.done = true
	c.endDraft(t)
	c.b.forgetButton(t.cancelToken)
	c.endStall(t)
	if t.progress == nil {
		return // the turn ended before it needed one
	}
	now := time.Now()
	switch {
	case !failed && c.b.out.Withdraw(t.progress):
		// Its send still waited for the Telegram budget (many chats at
		// once) and now never goes out: the answer supersedes it, so the
		// turn ends as a quick one does, with the answer alone and no
		// call spent on a summary nobody saw working. A send already on
		// its way is finished below like any shown progress message.
	case c.b.Config().Progress.OnFinish == "delete" && !failed:
		c.b.out.Delete(c.ctx(), t.progress, outbox.Low)
	default:
		html := render.RenderProgressFinal(t.view, c.progressOptions(t, now))
		c.b.out.Edit(c.ctx(), t.progress, outbox.Low, outbox.Content{Text: html})
	}
	if id := t.live.end(); id != 0 {
		if err := c.b.store.RemoveLive(c.ctx(), c.key, id); err != nil {
			c.logger().Error().Err(err).Msg("forget live progress message")
		}
	}
}

func (c *Chat) onEvent(ev runner.Event) {
	now := time.Now()
	switch e := ev.(type) {
	case runner.MessageLifecycle:
		c.onLifecycle(e)
	case runner.TurnStarted:
		c.b.noteCLIVersion(e.Version) // world.go
		if c.turn == nil || c.turn.done {
			c.startTurn(c.userMsgs[c.started])
		}
		if string(e.SessionID) != c.rec.SessionID && e.SessionID != "" {
			c.noteSession(e.SessionID) // projects.go
		}
	case runner.ApprovalRequested:
		c.requestApproval(e)
	case runner.ApprovalWithdrawn:
		if tok, ok := c.byRequest[e.RequestID]; ok {
			c.closeApproval(c.approvals[tok], state.DecisionWithdrawn, render.DecisionWithdrawn, nil, "")
		}
	case runner.SessionRestarted:
		c.noteSession(e.Current) // projects.go
		c.reply("ℹ️ The previous conversation could not be resumed, so Claude started a new session.", 0)
	case runner.ProcessExited:
		c.onExit(e)
		for _, h := range c.b.reg.onEvent { // after the engine has ended the turn it stopped
			h(c, ev)
		}
		return
	}
	if c.turn != nil && !c.turn.done {
		c.turn.view.Apply(ev, now)
		c.streamText(c.turn, ev, now) // draft.go
	}
	if tc, ok := ev.(runner.TurnCompleted); ok {
		c.onTurnCompleted(tc)
	}
	c.bookEvent(ev)                     // turn_costs.go
	for _, h := range c.b.reg.onEvent { // the modules', in modules.go's order
		h(c, ev)
	}
	c.updateCounts()
}

func (c *Chat) onTurnCompleted(tc runner.TurnCompleted) {
	t := c.turn
	c.endDraft(t) // before the answer is queued
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
	handled := false // before the inputs are forgotten: a limit retry needs its prompt
	for _, h := range c.b.reg.intercept {
		if h(c, tc, replyTo) {
			handled = true
			break
		}
	}
	c.forgetSent(tc.Messages...)
	// A result the CLI wrote for a notification it folded into another
	// (no model call, no text) carries nothing to show.
	silent := tc.NumTurns == 0 && tc.Answer == "" && tc.Origin != "" && tc.OK
	if !silent && !handled {
		meta := render.FinalMeta{Duration: tc.Duration, CostUSD: tc.CostUSD, ContextPercent: tc.ContextPercent, Notes: c.answerNotes(t, tc)}
		if t != nil {
			meta.Model, meta.Happened = t.view.Model, t.view.Happened()
			meta.StoppedForRestart = t.view.StoppedForRestart
		}
		meta.Project = c.ranLabel(c.b.Config()) // projects.go; the resume line is the places module's
		for _, h := range c.b.reg.headings {
			if meta.Heading = h(c, tc); meta.Heading != "" {
				break
			}
		}
		ans := Answer{Meta: &meta}
		for _, h := range c.b.reg.onAnswer {
			h(c, tc, &ans)
		}
		chunks := render.RenderFinal(tc, meta)
		for i, chunk := range chunks {
			opts := outbox.SendOptions{Tag: tagFinal}
			if i == 0 {
				opts.ReplyTo = outbox.MessageID(replyTo)
			}
			content := outbox.Content{Text: chunk}
			if i == len(chunks)-1 && len(ans.Keyboard.Rows) > 0 {
				content.Keyboard = ans.Keyboard
			}
			c.b.out.Send(c.ctx(), c.outKey, outbox.High, content, opts)
		}
	}
	if t != nil && !t.done {
		c.finishProgress(t, !tc.OK)
	}
	end := TurnEnd{ReplyTo: replyTo, Workdir: c.uploadDir(c.b.Config())}
	if t != nil {
		end.Links = t.view.Happened().Links()
	}
	c.turnEnded(end)
	var started time.Time
	if t != nil {
		started = t.view.StartedAt
	}
	c.recordTurn(c.b.turnRecord(c.key, c.sessPlace.Project, tc, started)) // turn_costs.go
}

// turnEnded runs the modules' turn-end hooks.
func (c *Chat) turnEnded(e TurnEnd) {
	for _, h := range c.b.reg.onTurnEnd {
		h(c, e)
	}
}

// answerNotes are the lines above an answer's footer: the turn's own
// (a scheduled run's label), then the modules' (budgets, limits).
func (c *Chat) answerNotes(t *turn, tc runner.TurnCompleted) []string {
	var out []string
	if t != nil {
		out = append(out, t.notes...)
	}
	for _, h := range c.b.reg.notes {
		out = append(out, h(c, tc)...)
	}
	return out
}

// recordTurn charges a turn to the chat: its budgets, /usage and /status.
func (c *Chat) recordTurn(rec state.TurnRecord) {
	if err := c.b.store.RecordTurn(c.ctx(), rec); err != nil {
		c.logger().Error().Err(err).Msg("record turn")
	}
	c.rec.CostUSD += rec.CostUSD
	c.rec.Turns++
}

func (c *Chat) onExit(e runner.ProcessExited) {
	t := c.turn
	charged := c.chargeUnreported() // turn_costs.go
	if t != nil && !t.done {
		t.view.Apply(e, time.Now())
		if !e.Requested || t.cancelled {
			c.reply(render.RenderCrash(e)+charged, t.replyTo)
		}
		c.finishProgress(t, true)
		// What the turn left (files in Claude's outbox) is handled all
		// the same, or it would wait until some later turn.
		c.turnEnded(TurnEnd{ReplyTo: t.replyTo, Workdir: t.workdir, Links: t.view.Happened().Links()})
	}
	if !e.Requested {
		if c.sess != nil { // what it waited for between turns died with it
			c.workStopped("it exited unexpectedly", c.sess.ID(), c.sessPlace, e.Pending)
		}
		c.resendQueued()
	} else {
		clear(c.inputs)
		clear(c.userMsgs)
		c.sentOrder, c.started = nil, ""
	}
	c.updateCounts()
}

// cancelTurn interrupts the running turn off the actor: Interrupt waits for
// the turn to end, which needs the actor to keep consuming events.
func (c *Chat) cancelTurn() {
	sess := c.sess
	if sess == nil {
		return
	}
	if c.turn != nil {
		c.turn.cancelled = true
	}
	ctx, log := c.ctx(), c.logger()
	c.b.goTracked(func() {
		if err := sess.Interrupt(ctx); err != nil {
			log.Warn().Err(err).Msg("interrupt")
		}
	})
}

// liveRecord hands a progress message's live record between the goroutine
// that writes it (once the message exists) and the actor that ends the
// turn: whichever comes second removes it. So it is removed exactly once,
// even when the actor stops (a drain, a second signal) before the record
// lands, and no stale "interrupted" edit waits for the next start.
type liveRecord struct {
	mu    sync.Mutex
	id    state.MessageID
	ended bool
}

// added notes the written record; true means the turn already ended and
// the caller removes it.
func (l *liveRecord) added(id state.MessageID) (remove bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return true
	}
	l.id = id
	return false
}

// end marks the turn over and returns the record to remove, 0 if none
// landed yet (added then removes it).
func (l *liveRecord) end() state.MessageID {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	return l.id
}

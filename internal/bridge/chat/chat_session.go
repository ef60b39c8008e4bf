package chat

import (
	"context"
	"errors"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// closeSession ends the session's process, handling its last events.
func (c *Chat) closeSession() {
	if c.sess == nil {
		return
	}
	sess, pl := c.sess, c.sessPlace
	pending, id := sess.Pending(), sess.ID() // before the close ends them (background_work.go)
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
				c.logger().Warn().Err(err).Msg("close session")
			}
			if c.events != nil {
				for ev := range c.events {
					c.safely("event", func() { c.onEvent(ev) })
				}
			}
			c.b.closeBook(sess)
			c.workStopped("untether restarted", id, pl, pending)
			if c.book != nil { // its exit can come after the stream ended
				if rec, ok := c.book.died(c.b); ok {
					c.recordTurn(rec)
				}
			}
			return
		}
	}
}

func (c *Chat) record() state.Chat {
	if !c.haveRec {
		rec, err := c.b.store.GetChat(c.ctx(), c.key)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			c.logger().Error().Err(err).Msg("read chat state")
		}
		rec.Key = c.key
		c.rec, c.haveRec = rec, true
	}
	return c.rec
}

func (c *Chat) saveRecord() {
	c.rec.LastActive = time.Now()
	if err := c.b.store.PutChat(c.ctx(), c.rec); err != nil {
		c.logger().Error().Err(err).Msg("save chat state")
	}
	c.settingsChanged() // settings_hooks.go
}

func (c *Chat) ensureSession() (*runner.Session, error) {
	if c.sess != nil {
		return c.sess, nil
	}
	rc, pl, sid := c.spawnConfig(c.b.Config()) // spawn.go
	rc.InheritEnv, rc.IncludePartialMessages = c.b.opts.InheritEnv, true
	rc.Pool, rc.Procs, rc.Logger = c.b.opts.Pool, procRecorder{c.b}, *c.logger()
	for _, h := range c.b.reg.onSpawn { // mode and model, the spending cap, the outbox prompt
		h(c, &rc, pl)
	}
	sess, err := runner.NewSession(rc, sid, sid != "", 0)
	if err != nil {
		return nil, err
	}
	c.sess, c.events = sess, sess.Events()
	c.live.Store(sess)
	c.book = c.b.openBook(sess, c.key, pl.Project) // turn_costs.go
	c.sessPlace, c.continueNext, c.continued = pl, false, rc.Continue || (c.adoptID != "" && string(sess.ID()) == c.adoptID)
	c.adoptID = ""
	c.sessDir = ""
	if rc.Remote == nil {
		c.sessDir = rc.Workdir
	}
	if rc.Continue {
		// The CLI names the session it continues at its first turn
		// (TurnStarted); until then there is none to note.
		c.rec.SessionID = ""
		c.saveRecord()
	} else {
		c.noteSession(sess.ID()) // projects.go
	}
	log := c.b.log.With().Str("chat", c.key.String()).Str("session", string(sess.ID())).Logger()
	c.log.Store(&log)
	return sess, nil
}

// prewarm starts this chat's CLI before its first message (off the actor:
// the start waits for the spawn limiter).
func (c *Chat) prewarm() {
	if name := c.record().Project; name != "" {
		if _, ok := c.usableProject(c.b.Config(), name); !ok {
			return // its project is gone (or closed to it): the chat is told when it next writes
		}
	}
	sess, err := c.ensureSession()
	if err != nil {
		c.logger().Warn().Err(err).Msg("prewarm session")
		return
	}
	ctx, log := c.ctx(), c.logger()
	c.b.goTracked(func() {
		if err := sess.Prewarm(ctx); err != nil {
			log.Info().Err(err).Msg("prewarm CLI")
		}
	})
}

// send queues a message for Claude from user from. The hand-over itself
// (which may start the CLI, or wait for a live-process slot) runs off the
// actor; see dispatch.go.
func (c *Chat) send(input runner.UserInput, msgID int, from state.UserID) {
	c.sendOutgoing(&Outgoing{input: input, msgID: msgID, label: LabelOf(input), from: from})
}

// SenderOf is the user who sent m (0 when Telegram names none).
func SenderOf(m *models.Message) state.UserID {
	if m == nil || m.From == nil {
		return 0
	}
	return state.UserID(m.From.ID)
}

func (c *Chat) sendOutgoing(o *Outgoing) {
	c.leaveClosedProject()                // projects_allowed.go: a scheduled run, a retry
	for _, gate := range c.b.reg.onSend { // the budget module: refused, and told
		o.held = false
		if !gate(c, o) {
			if o.held { // the places module holds it and sends it on later
				return
			}
			c.finishOutgoing(o) // refused, and the user told why
			return
		}
	}
	if _, err := c.ensureSession(); err != nil {
		c.logger().Error().Err(err).Msg("create session")
		c.reply(c.startErrorText(err), o.msgID) // projects.go
		c.finishOutgoing(o)                     // told: a held message or a batch is not handed in again
		return
	}
	if c.turn == nil || c.turn.done {
		c.startTurn(o.msgID)
		if o.note != "" {
			c.turn.notes = append(c.turn.notes, o.note)
		}
	}
	c.enqueue(o)
}

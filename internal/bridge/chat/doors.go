package chat

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
)

// The doors of a chat that modules use, and the chat as a whole. Every
// method runs on the chat's actor (inside a hook, a command, a press, or
// work posted back with Post or Offload), unless its comment says
// otherwise. The others: doors_claude.go (what goes to Claude),
// doors_telegram.go (what the chat is sent), doors_place.go (where the
// chat works and its session).

// Key is the chat (and forum topic) this actor serves.
func (c *Chat) Key() state.ChatKey { return c.key }

// Config is the live configuration.
func (c *Chat) Config() *config.Config { return c.b.Config() }

// Ctx is the chat's context: its logger names the chat (and the session,
// once there is one), a state write it makes names the chat at risk, and
// it is not cancelled by shutdown, so what it starts can finish cleanly.
func (c *Chat) Ctx() context.Context { return c.ctx() }

// Log is the chat's logger.
func (c *Chat) Log() *zerolog.Logger { return c.logger() }

// Record is what the state database keeps of the chat: its choices
// (project, branch, mode, model), its session and its totals.
func (c *Chat) Record() state.Chat { return c.record() }

// SaveRecord changes the chat's record with change and stores it.
func (c *Chat) SaveRecord(change func(rec *state.Chat)) {
	c.record()
	change(&c.rec)
	c.saveRecord()
}

// ChatWord is "topic" in a forum topic, else "chat".
func (c *Chat) ChatWord() string { return c.chatWord() }

// ReplyTarget is the message the running turn answers, 0 without one.
func (c *Chat) ReplyTarget() int { return c.replyTarget() }

// Busy reports whether a turn, an approval or a message on its way to
// Claude is open.
func (c *Chat) Busy() bool { return c.busy() }

// Post runs fn on the chat's actor, after what is queued. It never
// blocks; any goroutine may call it.
func (c *Chat) Post(fn func()) { c.post(item{fn: fn}) }

// Offload runs work off the actor, as work Shutdown waits for, with the
// chat's context; what work returns, if not nil, then runs on the actor.
// It is for what would hold the actor up: a control request to the CLI, a
// download, a git command.
func (c *Chat) Offload(work func(ctx context.Context) (back func())) {
	ctx := c.ctx()
	c.b.goTracked(func() {
		if back := work(ctx); back != nil {
			c.post(item{fn: back})
		}
	})
}

// Group reports whether the chat is a group or a forum topic, where
// everyone in it reads what is sent.
func (c *Chat) Group() bool { return c.group }

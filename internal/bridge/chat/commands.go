package chat

import (
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// registerEngine registers the engine's own commands and buttons: those
// before the modules' (their order is /help's), the rest after (/help last).
func (b *Engine) registerEngine(r *Registry, last bool) {
	if last {
		help := func(c *Chat, in Invocation) { c.reply(render.RenderHelp(r.help()), in.Msg.ID) }
		r.Command(Command{Name: "help", Help: "What this bot can do", Run: help})
		r.Command(Command{Name: "start", Run: help})
		return
	}
	r.Command(Command{Name: "new", Help: "Start a fresh Claude session", Run: func(c *Chat, in Invocation) { c.newSession(in.Msg.ID) }})
	r.Command(Command{Name: "cancel", Help: "Stop the running turn", WhileDraining: true,
		Run: func(c *Chat, in Invocation) { c.cancelCommand(in.Msg.ID) }})
	r.Command(Command{Name: "status", Help: "Session, model, mode, context, cost", WhileDraining: true,
		Run: func(c *Chat, in Invocation) { c.reply(c.status(), in.Msg.ID) }})
	b.registerEngineButtons(r) // buttons.go
}

// onCommand runs a registered command; any other goes to Claude as text
// (Claude's own slash commands: /compact, …).
func (c *Chat) onCommand(cmd ingress.Command, m *models.Message) {
	if h, ok := c.b.reg.command(cmd.Name); ok {
		h.Run(c, Invocation{Args: cmd.Args, Msg: m})
		return
	}
	c.send(runner.UserInput{Text: m.Text}, m.ID, SenderOf(m))
}

// cancelCommand is /cancel: what a module waits for (a login), else
// messages waiting for a slot, else the running turn.
func (c *Chat) cancelCommand(replyTo int) {
	if c.cancelOwn(replyTo) { // settings_hooks.go: a module's (a login)
		return
	}
	if c.cancelWaiting(replyTo) {
		return
	}
	if c.turn == nil || c.turn.done {
		c.reply("Nothing is running.", replyTo)
		return
	}
	c.cancelTurn()
}

func (c *Chat) status() string {
	rec := c.record()
	project, workdir := c.statusPlace() // projects.go
	info := render.StatusInfo{SessionID: rec.SessionID,
		CostUSD: rec.CostUSD, Turns: rec.Turns, Project: project, Workdir: workdir, LastActive: rec.LastActive,
		PendingApprovals: len(c.approvals), Pending: c.pendingItems(), Now: time.Now(), ProcessState: string(runner.StateExited)}
	// The chat's totals span every project it worked in; /status is about
	// the session, whose own totals the sessions history keeps.
	if rec.SessionID != "" {
		if se, err := c.b.store.GetSession(c.ctx(), rec.SessionID); err == nil && se.ID != "" {
			info.CostUSD, info.Turns = se.CostUSD, se.Turns
		}
	}
	if c.sess != nil {
		info.ProcessState = string(c.sess.State())
		info.BackgroundTasks = c.sess.Pending().Tasks // never idle-closed meanwhile (runner/background.go); wake-ups: modules/wakeups
	}
	if turns, err := c.b.store.RecentTurns(c.ctx(), c.key, 1); err == nil && len(turns) > 0 {
		info.ContextPercent = turns[0].ContextPct
	}
	for _, h := range c.b.reg.onStatus { // the settings module: model and mode
		h(c, &info)
	}
	html := render.RenderStatus(info)
	if c.waitingForSlot() {
		html += "\n⏳ Waiting for a free Claude slot since " + render.EscapeHTML(time.Since(c.sends.since).Round(time.Second).String()) + " ago"
	}
	if n := c.pendingSends(); n > 0 {
		html += fmt.Sprintf("\n📨 %d message(s) not yet handed to Claude", n)
	}
	return html
}

func (c *Chat) newSession(replyTo int) {
	c.resetSession()
	c.reply("🆕 New session. Your next message starts a fresh conversation.", replyTo)
}

// resetSession forgets the chat's session (/new, and schedules with
// fresh_session); the next message starts a new one.
func (c *Chat) resetSession() {
	c.dropSession("/new") // projects.go
	c.continueNext = false
	c.forgetPlaceSession()
	if err := c.b.store.ForgetSession(c.ctx(), c.key); err != nil {
		c.logger().Error().Err(err).Msg("forget session")
	}
	c.haveRec = false
	c.rec = c.record()
	c.rec.SessionID = ""
}

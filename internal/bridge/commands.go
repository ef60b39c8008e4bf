package bridge

import (
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// commandHelp lists the commands, for /help and setMyCommands.
var commandHelp = []render.CommandHelp{
	{Command: "new", Description: "Start a fresh Claude session"},
	{Command: "cancel", Description: "Stop the running turn"},
	{Command: "status", Description: "Session, model, mode, context, cost"},
	{Command: "mode", Description: "Show or switch the permission mode"},
	{Command: "model", Description: "Show or switch the model (e.g. /model sonnet)"},
	{Command: "usage", Description: "What Claude cost, and the subscription limits"},
	{Command: "budget", Description: "Spending against the budgets"},
	{Command: "at", Description: "Send a prompt later: /at 30m PROMPT, /at 09:00 PROMPT"},
	{Command: "every", Description: "Send a prompt on a schedule: /every \"0 9 * * 1-5\" PROMPT"},
	{Command: "schedules", Description: "This chat's schedules; /schedules pause or resume"},
	{Command: "project", Description: "Show or switch the project (in a topic: bind it)"},
	{Command: "topic", Description: "New forum topic for a project: /topic NAME [BRANCH]"},
	{Command: "branch", Description: "Work in a git worktree: /branch NAME, /branch - for main"},
	{Command: "sessions", Description: "This chat's last sessions, with Resume buttons"},
	{Command: "continue", Description: "Continue the latest session in the project, e.g. from a terminal"},
	{Command: "get", Description: "Send a file from the project: /get PATH"},
	{Command: "help", Description: "What this bot can do"},
}

func (c *chat) onCommand(cmd ingress.Command, m *models.Message) {
	switch cmd.Name {
	case "start", "help":
		c.reply(render.RenderHelp(commandHelp), m.ID)
	case "new":
		c.newSession(m.ID)
	case "cancel":
		if c.cancelWaiting(m.ID) {
			return
		}
		if c.turn == nil || c.turn.done {
			c.reply("Nothing is running.", m.ID)
			return
		}
		c.cancelTurn()
	case "status":
		c.reply(c.status(), m.ID)
	case "mode":
		c.setMode(cmd.Args, m.ID)
	case "model":
		c.setModel(cmd.Args, m.ID)
	case "usage":
		c.showUsage(m.ID) // usage.go
	case "budget":
		c.showBudget(m.ID) // budget.go
	case "at":
		c.scheduleAt(cmd.Args, m) // schedules.go
	case "every":
		c.scheduleEvery(cmd.Args, m) // schedules.go
	case "schedules":
		c.schedulesCommand(cmd.Args, m.ID) // schedules.go
	case "project":
		c.chooseProject(cmd.Args, m.ID) // projects.go
	case "topic":
		c.createTopic(cmd.Args, m) // topics.go
	case "branch":
		c.chooseBranch(cmd.Args, m.ID) // worktrees.go
	case "sessions":
		c.listSessions(m.ID) // sessions.go
	case "continue":
		c.continueLatest(m.ID) // sessions.go
	case "get":
		c.getCommand(cmd.Args, m) // get.go
	default:
		// Claude's own slash commands (/compact, …) go to the CLI as text.
		c.send(runner.UserInput{Text: m.Text}, m.ID, senderOf(m))
	}
}

func (c *chat) status() string {
	rec := c.record()
	project, workdir := c.statusPlace() // projects.go
	info := render.StatusInfo{SessionID: rec.SessionID, Model: modelName(c.currentModel()), Mode: string(c.currentMode()),
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
	}
	if turns, err := c.b.store.RecentTurns(c.ctx(), c.key, 1); err == nil && len(turns) > 0 {
		info.ContextPercent = turns[0].ContextPct
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

func (c *chat) newSession(replyTo int) {
	c.resetSession()
	c.reply("🆕 New session. Your next message starts a fresh conversation.", replyTo)
}

// resetSession forgets the chat's session (/new, and schedules with
// fresh_session); the next message starts a new one.
func (c *chat) resetSession() {
	c.dropSession("/new") // projects.go
	c.continueNext = false
	c.forgetPlaceSession()
	if err := c.b.store.ForgetSession(c.ctx(), c.key); err != nil {
		c.log.Error().Err(err).Msg("forget session")
	}
	c.haveRec = false
	c.rec = c.record()
	c.rec.SessionID = ""
}

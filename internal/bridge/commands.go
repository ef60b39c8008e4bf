package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// commandHelp lists the commands, for /help and setMyCommands.
var commandHelp = []render.CommandHelp{
	{Command: "new", Description: "Start a fresh Claude session"},
	{Command: "cancel", Description: "Stop the running turn"},
	{Command: "status", Description: "Session, model, mode, context, cost"},
	{Command: "mode", Description: "Permission mode: default, acceptEdits, plan, bypassPermissions, dontAsk"},
	{Command: "model", Description: "Switch the model (e.g. /model claude-sonnet-5-5)"},
	{Command: "help", Description: "What this bot can do"},
}

func (c *chat) onCommand(cmd command, m *models.Message) {
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
	default:
		// Claude's own slash commands (/compact, …) go to the CLI as text.
		c.sendToClaude(m.Text, m.ID)
	}
}

func (c *chat) status() string {
	rec := c.record()
	cfg := c.b.Config()
	info := render.StatusInfo{SessionID: rec.SessionID, Model: rec.Model, Mode: rec.PermissionMode,
		CostUSD: rec.CostUSD, Turns: rec.Turns, Workdir: rec.Workdir, LastActive: rec.LastActive,
		PendingApprovals: len(c.approvals), Now: time.Now(), ProcessState: string(runner.StateExited)}
	if info.Workdir == "" {
		info.Workdir = cfg.Claude.Workdir
	}
	if info.Mode == "" {
		info.Mode = string(cfg.Claude.PermissionMode)
	}
	if c.sess != nil {
		info.ProcessState = string(c.sess.State())
		info.Model, info.Mode = c.sess.Model(), string(c.sess.PermissionMode())
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
	if old := c.sess; old != nil {
		events := c.events
		c.sess, c.events = nil, nil
		c.live.Store(nil)
		for _, a := range c.approvals {
			c.closeApproval(a, "withdrawn", render.DecisionWithdrawn, nil, "/new")
		}
		if c.turn != nil && !c.turn.done {
			c.finishProgress(c.turn, true)
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(c.b.runCtx), time.Minute)
			defer cancel()
			_ = old.Interrupt(ctx)
			go func() {
				for range events { // nobody shows the old session's last frames
				}
			}()
			_ = old.Close(ctx)
		}()
	}
	if err := c.b.store.ForgetSession(c.ctx(), c.key); err != nil {
		c.log.Error().Err(err).Msg("forget session")
	}
	c.haveRec = false
	c.rec = c.record()
	c.rec.SessionID = ""
	c.reply("🆕 New session. Your next message starts a fresh conversation.", replyTo)
}

func (c *chat) setMode(arg string, replyTo int) {
	mode := runner.PermissionMode(strings.TrimSpace(arg))
	if !mode.Valid() {
		c.reply("Usage: <code>/mode default|acceptEdits|plan|bypassPermissions|dontAsk</code>", replyTo)
		return
	}
	sess, err := c.ensureSession()
	if err != nil {
		c.reply("⚠️ "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	go func() {
		err := sess.SetPermissionMode(c.ctx(), mode)
		c.post(item{fn: func() {
			if err != nil {
				c.reply("⚠️ Could not switch the mode: "+render.EscapeHTML(err.Error()), replyTo)
				return
			}
			c.rec.PermissionMode = string(mode)
			c.saveRecord()
			c.reply("Permission mode: <b>"+render.EscapeHTML(string(mode))+"</b>", replyTo)
		}})
	}()
}

func (c *chat) setModel(arg string, replyTo int) {
	model := strings.TrimSpace(arg)
	if model == "" || strings.ContainsAny(model, " \t\n") {
		c.reply("Usage: <code>/model NAME</code>, e.g. <code>/model claude-sonnet-5-5</code>", replyTo)
		return
	}
	sess, err := c.ensureSession()
	if err != nil {
		c.reply("⚠️ "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	go func() {
		err := sess.SetModel(c.ctx(), model)
		note := ""
		if err != nil && errors.Is(err, runner.ErrControl) {
			// The live process refused to switch: restart it on the new
			// model when it is idle; the session resumes with its history.
			if sess.State() == runner.StateIdle {
				_ = sess.CloseProcess(c.ctx())
			}
			note = " (applies from your next message)"
			err = nil
		}
		c.post(item{fn: func() {
			if err != nil {
				c.reply("⚠️ Could not switch the model: "+render.EscapeHTML(err.Error()), replyTo)
				return
			}
			c.rec.Model = model
			c.saveRecord()
			c.reply("Model: <b>"+render.EscapeHTML(model)+"</b>"+note, replyTo)
		}})
	}()
}

package chat

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// /model tells the truth: a live CLI tries the model first (it asks the API
// about a name it does not know) and a refusal keeps the old model. Without
// a live CLI the choice is recorded and the next start is the first to use
// it; if that start fails on the model, the chat goes back to the
// configured model and is told.

// dropInvalidModel forgets a stored /model choice that is not a model name
// (runner.CheckModel), which the CLI must never get as an argument, and
// tells the chat; it is called before a spawn.
func (c *Chat) dropInvalidModel(p config.ProjectSettings) {
	m := c.record().Model
	err := runner.CheckModel(m)
	if err == nil {
		return
	}
	c.log.Error().Err(err).Msg("the chat's stored model is not a model name; using the configured one")
	c.rec.Model = ""
	c.saveRecord()
	c.reply("⚠️ This "+c.chatWord()+"'s chosen model <code>"+render.EscapeHTML(m)+"</code> is not a model name, so Claude starts on "+
		render.EscapeHTML(modelName(p.Model))+". /model changes it.", 0)
}

// spawnModel returns the model the chat's session in project p starts
// with: its own /model choice, else the project's (whose default is
// [claude]'s; "" lets the CLI choose).
func (c *Chat) spawnModel(p config.ProjectSettings) string {
	if m := c.record().Model; m != "" {
		return m
	}
	return p.Model
}

// currentModel is the model the chat's CLI runs, or starts with next.
func (c *Chat) currentModel() string {
	if c.sess != nil {
		return c.sess.Model()
	}
	return c.spawnModel(c.projectFor(c.b.Config()))
}

func modelName(m string) string {
	if m == "" {
		return "the CLI's default"
	}
	return m
}

func modelText(m string) string { return "Model: <b>" + render.EscapeHTML(modelName(m)) + "</b>" }

// setModel is /model: without an argument it shows [claude] models as
// buttons (or the current model and how to change it), else it switches.
func (c *Chat) setModel(arg string, replyTo int) {
	model := strings.TrimSpace(arg)
	cur := c.currentModel()
	if model == "" {
		if models := c.b.Config().Claude.Models; len(models) > 0 {
			c.showMenu("model", modelText(cur)+"\nChoose the model for this chat, or send <code>/model NAME</code>:", models, cur, replyTo)
			return
		}
		c.reply(modelText(cur)+"\nSwitch with <code>/model NAME</code>, e.g. <code>/model sonnet</code>", replyTo)
		return
	}
	c.applyModel(model, func(html string) { c.reply(html, replyTo) })
}

// applyModel switches the chat to model and tells the user through respond.
// A name that is not a model name (runner.CheckModel: it would become a CLI
// argument) is refused, and nothing changes.
func (c *Chat) applyModel(model string, respond func(html string)) {
	if err := runner.CheckModel(model); err != nil {
		respond("⚠️ <code>" + render.EscapeHTML(model) + "</code> is not a model name: " + render.EscapeHTML(runner.ModelRule) +
			".\nStill on <b>" + render.EscapeHTML(modelName(c.currentModel())) + "</b>.")
		return
	}
	sess := c.sess
	if sess == nil {
		c.recordModel(model)
		respond(modelText(model) + "\nClaude has not started yet; it tries this model when it does, and falls back to the configured one if the model does not work.")
		return
	}
	old := sess.Model()
	ctx := c.ctx() // on the actor: c.ctx reads c.log, which ensureSession replaces
	go func() {
		live, err := sess.TrySetModel(ctx, model)
		c.post(item{fn: func() {
			switch {
			case err != nil:
				respond("⚠️ Claude refused the model " + render.EscapeHTML(model) + ": " + render.EscapeHTML(refusalReason(err)) +
					"\nStill on <b>" + render.EscapeHTML(modelName(old)) + "</b>.")
			case live:
				c.recordModel(model)
				respond(modelText(model))
			default:
				c.recordModel(model)
				respond(modelText(model) + "\nClaude is not running; it tries this model when it next starts, and falls back to the configured one if the model does not work.")
			}
		}})
	}()
}

// refusalReason is the CLI's own explanation from a control error, e.g.
// "Model 'x' not found (not_found)".
func refusalReason(err error) string {
	msg := err.Error()
	if errors.Is(err, runner.ErrControl) {
		if i := strings.Index(msg, "set_model: "); i >= 0 {
			return msg[i+len("set_model: "):]
		}
	}
	return msg
}

// recordModel stores model as the chat's choice; the configured model is
// not stored for a chat that never chose, so it keeps following the config.
func (c *Chat) recordModel(model string) {
	rec := c.record()
	if rec.Model == model || (rec.Model == "" && model == c.projectFor(c.b.Config()).Model) {
		return
	}
	c.rec.Model = model
	c.saveRecord()
}

// checkModelFailure reverts a chat whose chosen model the API does not know
// (a 404 on the model call) to the configured model. The turn's own answer
// already says what went wrong; this says what happens next.
func (c *Chat) checkModelFailure(tc runner.TurnCompleted) {
	sess := c.sess
	chosen := c.record().Model
	cfgModel := c.projectFor(c.b.Config()).Model
	if sess == nil || tc.OK || tc.APIErrorStatus != http.StatusNotFound || chosen == "" || chosen == cfgModel || sess.Model() != chosen {
		return
	}
	c.rec.Model = ""
	c.saveRecord()
	if err := sess.AdoptModel(cfgModel); err != nil {
		c.log.Error().Err(err).Msg("fall back to the configured model")
		return
	}
	c.log.Warn().Str("model", chosen).Str("configured", cfgModel).Msg("the chat's model failed at the API; back to the configured model")
	c.reply("⚠️ The model "+render.EscapeHTML(chosen)+" did not work, so this chat is back on "+render.EscapeHTML(modelName(cfgModel))+
		". Send your message again.", c.replyTarget())
	base, log := c.ctx(), c.log // on the actor: ensureSession replaces c.log
	go func() {
		ctx, cancel := context.WithTimeout(base, 2*runner.DefaultControlTimeout)
		defer cancel()
		if _, err := sess.TrySetModel(ctx, cfgModel); err != nil {
			// The next start uses the configured model (adopted above); a
			// live CLI that refuses it is closed so that start happens.
			log.Warn().Err(err).Msg("switch the CLI back to the configured model; closing it")
			_ = sess.CloseProcess(ctx)
		}
	}()
}

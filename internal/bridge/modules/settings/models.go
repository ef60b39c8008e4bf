package settings

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
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
func dropInvalidModel(c *chat.Chat, p config.ProjectSettings) {
	m := c.Record().Model
	err := runner.CheckModel(m)
	if err == nil {
		return
	}
	c.Log().Error().Err(err).Msg("the chat's stored model is not a model name; using the configured one")
	c.SaveRecord(func(r *state.Chat) { r.Model = "" })
	c.Reply("⚠️ This "+c.ChatWord()+"'s chosen model <code>"+render.EscapeHTML(m)+"</code> is not a model name, so Claude starts on "+
		render.EscapeHTML(modelName(p.Model))+". /model changes it.", 0)
}

// spawnModel returns the model the chat's session in project p starts
// with: its own /model choice, else the project's (whose default is
// [claude]'s; "" lets the CLI choose).
func spawnModel(c *chat.Chat, p config.ProjectSettings) string {
	if m := c.Record().Model; m != "" {
		return m
	}
	return p.Model
}

// currentModel is the model the chat's CLI runs, or starts with next.
func currentModel(c *chat.Chat) string {
	if c.Session() != nil {
		return c.Session().Model()
	}
	return spawnModel(c, c.Project(c.Config()))
}

func modelName(m string) string {
	if m == "" {
		return "the CLI's default"
	}
	return m
}

func modelText(m string) string { return "Model: " + render.Bold(modelName(m)) }

// setModel is /model: without an argument it shows [claude] models as
// buttons (or the current model and how to change it), else it switches.
func setModel(c *chat.Chat, arg string, replyTo int) {
	model := strings.TrimSpace(arg)
	cur := currentModel(c)
	if model == "" {
		if models := c.Config().Claude.Models; len(models) > 0 {
			c.ShowMenu("model", modelText(cur)+"\nChoose the model for this chat, or send <code>/model NAME</code>:", models, cur, replyTo)
			return
		}
		c.Reply(modelText(cur)+"\nSwitch with <code>/model NAME</code>, e.g. <code>/model sonnet</code>", replyTo)
		return
	}
	applyModel(c, model, func(html string) { c.Reply(html, replyTo) })
}

// applyModel switches the chat to model and tells the user through respond.
// A name that is not a model name (runner.CheckModel: it would become a CLI
// argument) is refused, and nothing changes.
func applyModel(c *chat.Chat, model string, respond func(html string)) {
	if err := runner.CheckModel(model); err != nil {
		respond("⚠️ " + render.Code(model) + " is not a model name: " + render.EscapeHTML(runner.ModelRule) +
			".\nStill on " + render.Bold(modelName(currentModel(c))) + ".")
		return
	}
	sess := c.Session()
	if sess == nil {
		recordModel(c, model)
		respond(modelText(model) + "\nClaude has not started yet; it tries this model when it does, and falls back to the configured one if the model does not work.")
		return
	}
	old := sess.Model()
	c.Offload(func(ctx context.Context) func() {
		live, err := sess.TrySetModel(ctx, model)
		return func() {
			switch {
			case err != nil:
				respond("⚠️ Claude refused the model " + render.EscapeHTML(model) + ": " + render.EscapeHTML(refusalReason(err)) +
					"\nStill on " + render.Bold(modelName(old)) + ".")
			case live:
				recordModel(c, model)
				respond(modelText(model))
			default:
				recordModel(c, model)
				respond(modelText(model) + "\nClaude is not running; it tries this model when it next starts, and falls back to the configured one if the model does not work.")
			}
		}
	})
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
func recordModel(c *chat.Chat, model string) {
	rec := c.Record()
	if rec.Model == model || (rec.Model == "" && model == c.Project(c.Config()).Model) {
		return
	}
	c.SaveRecord(func(r *state.Chat) { r.Model = model })
}

// checkModelFailure reverts a chat whose chosen model the API does not know
// (a 404 on the model call) to the configured model. The turn's own answer
// already says what went wrong; this says what happens next.
func checkModelFailure(c *chat.Chat, tc runner.TurnCompleted) {
	sess := c.Session()
	chosen := c.Record().Model
	cfgModel := c.Project(c.Config()).Model
	if sess == nil || tc.OK || tc.APIErrorStatus != http.StatusNotFound || chosen == "" || chosen == cfgModel || sess.Model() != chosen {
		return
	}
	c.SaveRecord(func(r *state.Chat) { r.Model = "" })
	if err := sess.AdoptModel(cfgModel); err != nil {
		c.Log().Error().Err(err).Msg("fall back to the configured model")
		return
	}
	c.Log().Warn().Str("model", chosen).Str("configured", cfgModel).Msg("the chat's model failed at the API; back to the configured model")
	c.Reply("⚠️ The model "+render.EscapeHTML(chosen)+" did not work, so this chat is back on "+render.EscapeHTML(modelName(cfgModel))+
		". Send your message again.", c.ReplyTarget())
	c.Offload(func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, 2*runner.DefaultControlTimeout)
		defer cancel()
		if _, err := sess.TrySetModel(ctx, cfgModel); err != nil {
			// The next start uses the configured model (adopted above); a
			// live CLI that refuses it is closed so that start happens.
			zerolog.Ctx(ctx).Warn().Err(err).Msg("switch the CLI back to the configured model; closing it")
			_ = sess.CloseProcess(ctx)
		}
		return nil
	})
}

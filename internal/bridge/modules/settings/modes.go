package settings

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Permission modes are the operator's call: [claude] allowed_modes is the
// ceiling for every chat, and a project's allowed_modes may narrow it for
// the chats working in that project (config.Project resolves them). /mode refuses a mode outside it whether or not a
// CLI runs, a chat's stored choice outside it is dropped when its session
// starts, and a switch the CLI makes by itself to a mode outside it is
// reverted. Switches the CLI makes within it (a plan approved, an "always
// allow" that carried setMode) become the chat's mode, so a respawn resumes
// in the mode the user last saw.

func modeOf(s string) runner.PermissionMode { return runner.PermissionMode(s) }

func modeAllowed(c *chat.Chat, m runner.PermissionMode) bool {
	return c.Project(c.Config()).ModeAllowed(config.PermissionMode(m))
}

// allowedModes lists the modes the chat's project allows, in the config's
// order.
func allowedModes(c *chat.Chat) []string {
	var out []string
	for _, m := range c.Project(c.Config()).AllowedModes {
		out = append(out, string(m))
	}
	return out
}

// notAllowedText is the refusal for a mode outside the allowed modes: the
// daemon's, or the chat's project's when it narrows them.
func notAllowedText(c *chat.Chat, m runner.PermissionMode) string {
	return "⛔ " + render.EscapeHTML(string(m)) + " is not allowed " + notAllowedWhere(c.Config(), c.Project(c.Config()))
}

// notAllowedWhere names the list that refuses a mode: the daemon's, or the
// project's when it narrows it.
func notAllowedWhere(cfg *config.Config, p config.ProjectSettings) string {
	if !slices.Equal(p.AllowedModes, cfg.Claude.AllowedModes) {
		return "in project " + render.EscapeHTML(p.Name) + " (projects." + render.EscapeHTML(p.Name) + ".allowed_modes)"
	}
	return "on this daemon (claude.allowed_modes)"
}

func modeText(m runner.PermissionMode) string {
	return "Permission mode: " + render.Bold(string(m))
}

// spawnMode returns the mode the chat's session in project p starts in:
// its own /mode choice while the operator allows it there, else the
// project's permission_mode. A stored choice that is not allowed is
// dropped, and the chat is told.
func spawnMode(c *chat.Chat, cfg *config.Config, p config.ProjectSettings) runner.PermissionMode {
	rec := c.Record()
	def := runner.PermissionMode(p.PermissionMode)
	stored := modeOf(rec.PermissionMode)
	if stored == "" || stored == def {
		return def
	}
	if p.ModeAllowed(config.PermissionMode(stored)) {
		return stored
	}
	where := notAllowedWhere(cfg, p)
	c.SaveRecord(func(r *state.Chat) { r.PermissionMode = "" })
	c.Log().Warn().Str("stored", string(stored)).Str("mode", string(def)).Msg("the chat's permission mode is no longer allowed; using permission_mode")
	c.Reply("ℹ️ This chat's permission mode "+render.EscapeHTML(string(stored))+" is no longer allowed "+where+", so Claude runs in <b>"+
		render.EscapeHTML(string(def))+"</b>. /mode shows the modes you can choose.", 0)
	return def
}

// currentMode is the mode the chat's CLI runs in, or starts in next.
func currentMode(c *chat.Chat) runner.PermissionMode {
	if c.Session() != nil {
		return c.Session().PermissionMode()
	}
	p := c.Project(c.Config())
	if m := modeOf(c.Record().PermissionMode); m != "" && p.ModeAllowed(config.PermissionMode(m)) {
		return m
	}
	return runner.PermissionMode(p.PermissionMode)
}

// setMode is /mode: without an argument it shows the allowed modes as
// buttons, else it switches.
func setMode(c *chat.Chat, arg string, replyTo int) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		cur := currentMode(c)
		c.ShowMenu("mode", modeText(cur)+"\nChoose the mode for this chat:", allowedModes(c), string(cur), replyTo)
		return
	}
	mode := modeOf(arg)
	if !mode.Valid() {
		c.Reply("Usage: <code>/mode "+render.EscapeHTML(strings.Join(allowedModes(c), "|"))+"</code>, or /mode alone for buttons", replyTo)
		return
	}
	applyMode(c, mode, func(html string) { c.Reply(html, replyTo) })
}

// applyMode switches the chat to mode, or refuses it, and tells the user
// through respond. With a live CLI the switch is made there first (off the
// actor) and recorded only once the CLI took it; without one the choice is
// recorded and the next start uses it.
func applyMode(c *chat.Chat, mode runner.PermissionMode, respond func(html string)) {
	if !modeAllowed(c, mode) {
		respond(notAllowedText(c, mode))
		return
	}
	sess := c.Session()
	if sess == nil {
		recordMode(c, mode)
		respond(modeText(mode))
		return
	}
	c.Offload(func(ctx context.Context) func() {
		err := sess.SetPermissionMode(ctx, mode)
		return func() {
			if err != nil {
				respond("⚠️ Could not switch the mode: " + render.EscapeHTML(err.Error()))
				return
			}
			recordMode(c, mode)
			respond(modeText(mode))
		}
	})
}

// recordMode stores mode as the chat's choice. The config's own default is
// not stored for a chat that never chose, so it keeps following the config.
func recordMode(c *chat.Chat, mode runner.PermissionMode) {
	rec := c.Record()
	if modeOf(rec.PermissionMode) == mode || (rec.PermissionMode == "" && string(mode) == string(c.Project(c.Config()).PermissionMode)) {
		return
	}
	c.SaveRecord(func(r *state.Chat) { r.PermissionMode = string(mode) })
}

// onModeChanged handles a mode switch the CLI announces (system/status).
// Our own /mode switches arrive here too, already allowed.
func onModeChanged(c *chat.Chat, sess *runner.Session, mode runner.PermissionMode) {
	if sess == nil || sess != c.Session() {
		return
	}
	if modeAllowed(c, mode) {
		if err := sess.AdoptPermissionMode(mode); err != nil {
			c.Log().Warn().Err(err).Msg("adopt the CLI's permission mode")
			return
		}
		recordMode(c, mode)
		return
	}
	// The session still holds the mode it had before the CLI switched.
	back := sess.PermissionMode()
	if !modeAllowed(c, back) {
		back = runner.PermissionMode(c.Project(c.Config()).PermissionMode)
	}
	c.Log().Warn().Str("mode", string(mode)).Str("back", string(back)).Msg("the CLI switched to a permission mode that is not allowed; switching back")
	c.Reply("⛔ Claude switched to "+render.EscapeHTML(string(mode))+", which is not allowed "+notAllowedWhere(c.Config(), c.Project(c.Config()))+"; switching back to <b>"+
		render.EscapeHTML(string(back))+"</b>.", c.ReplyTarget())
	c.Offload(func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, 2*runner.DefaultControlTimeout)
		defer cancel()
		if err := sess.SetPermissionMode(ctx, back); err != nil {
			// A CLI left in a mode the operator forbids must not go on.
			zerolog.Ctx(ctx).Error().Err(err).Msg("switch the CLI back to an allowed permission mode; stopping it")
			sess.Kill()
			return func() {
				c.Reply("⚠️ Could not switch Claude back, so it was stopped. Your next message resumes the session in "+render.EscapeHTML(string(back))+".", 0)
			}
		}
		return nil
	})
}

// allowedSuggestions drops the permission suggestions that would switch the
// chat to a mode the operator does not allow, so "Always allow" never
// offers one (nor sends it to the CLI). The others are kept as they came.
func allowedSuggestions(c *chat.Chat, raw json.RawMessage) json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return raw
	}
	kept := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		var s struct {
			Type string `json:"type"`
			Mode string `json:"mode"`
		}
		if json.Unmarshal(it, &s) == nil && s.Type == "setMode" && !modeAllowed(c, modeOf(s.Mode)) {
			c.Log().Info().Str("mode", s.Mode).Msg("dropping a permission suggestion for a mode that is not allowed")
			continue
		}
		kept = append(kept, it)
	}
	switch {
	case len(kept) == len(items):
		return raw
	case len(kept) == 0:
		return nil
	}
	out, err := json.Marshal(kept)
	if err != nil {
		return nil
	}
	return out
}

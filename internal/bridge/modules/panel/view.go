package panel

import (
	"os"
	"path/filepath"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// The panel's actions: each is a command, run as typed.
const (
	actModel    = "m"
	actEffort   = "e"
	actMode     = "o"
	actProject  = "p"
	actBranch   = "b"
	actNew      = "n"
	actSessions = "s"
	actCancel   = "c"
)

// actionCommand is the command an action runs, "" for none.
func actionCommand(action string) string {
	return map[string]string{actModel: "model", actEffort: "effort", actMode: "mode", actProject: "project", actBranch: "branch",
		actNew: "new", actSessions: "sessions", actCancel: "cancel"}[action]
}

// values is what a panel shows: what the chat's Claude runs with now, or
// starts with next (what /status says).
type values struct {
	model, effort, mode string
	project, branch     string
	projects, branches  bool // a choice to offer
}

// valuesOf reads the chat's values, as the commands that change them do:
// the live CLI's, else the chat's own choice while the config allows it,
// else the config's.
func valuesOf(c *chat.Chat, cfg *config.Config) values {
	p, pl := c.Place(cfg)
	rec := c.Record()
	v := values{project: pl.Project, branch: pl.Branch, projects: len(c.ProjectNames(cfg)) > 1}
	v.branches = pl.Branch != "" || (!p.Remote() && hasWorktrees(p.Path))
	if sess := c.Session(); sess != nil {
		v.model, v.mode = sess.Model(), string(sess.PermissionMode())
	} else {
		v.model, v.mode = rec.Model, rec.PermissionMode
		if v.model == "" {
			v.model = p.Model
		}
		if v.mode == "" || !p.ModeAllowed(config.PermissionMode(v.mode)) {
			v.mode = string(p.PermissionMode)
		}
	}
	v.effort = rec.Effort
	if !runner.Effort(v.effort).Valid() {
		v.effort = string(p.Effort)
	}
	return v
}

// hasWorktrees reports whether the project has something under its
// .worktrees, where /branch keeps them.
func hasWorktrees(path string) bool {
	entries, err := os.ReadDir(filepath.Join(path, chat.WorktreesDir))
	return err == nil && len(entries) > 0
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// render is the panel's text and buttons; token is its buttons'.
func (m *Module) render(c *chat.Chat, token string) (string, render.Keyboard) {
	v := valuesOf(c, c.Config())
	model, effort, branch := or(v.model, "the CLI's default"), or(v.effort, "the CLI's default"), or(v.branch, "main checkout")
	text := "🎛 <b>Control panel</b> of this " + c.ChatWord() + "\n" +
		"Model: <b>" + render.EscapeHTML(model) + "</b>\n" +
		"Effort: <b>" + render.EscapeHTML(effort) + "</b>\n" +
		"Mode: <b>" + render.EscapeHTML(v.mode) + "</b>\n"
	if v.projects || v.branches {
		text += "Project: <b>" + render.EscapeHTML(v.project) + "</b>"
		if v.branches {
			text += " · branch <b>" + render.EscapeHTML(branch) + "</b>"
		}
		text += "\n"
	}
	text += "<i>Kept up to date here. A button does what its command does.</i>"
	btn := func(label, action string) render.Button {
		return render.Button{Text: render.Truncate(label, 40), CallbackData: chat.CallbackData(btnPanel, token+"."+action)}
	}
	kb := render.Keyboard{Rows: [][]render.Button{
		{btn("🧠 Model: "+model, actModel), btn("⚡ Effort: "+effort, actEffort)},
		{btn("🛡 Mode: "+v.mode, actMode)},
	}}
	var place []render.Button
	if v.projects {
		place = append(place, btn("📁 Project: "+v.project, actProject))
	}
	if v.branches {
		place = append(place, btn("🌿 Branch: "+branch, actBranch))
	}
	if len(place) > 0 {
		kb.Rows = append(kb.Rows, place)
	}
	kb.Rows = append(kb.Rows,
		[]render.Button{btn("🆕 New session", actNew), btn("📜 Sessions", actSessions)},
		[]render.Button{btn("⏹ Cancel", actCancel)})
	return text, kb
}

package settings

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// onSettingsEvent follows what the CLI reports about the chat's settings:
// mode switches it made, and a turn that failed on the chat's model.
func onSettingsEvent(c *chat.Chat, ev runner.Event) {
	switch e := ev.(type) {
	case runner.PermissionModeChanged:
		onModeChanged(c, c.Session(), e.Mode)
	case runner.TurnCompleted:
		checkModelFailure(c, e)
	}
}

// Module is the feature.
type Module struct{}

// New builds the module.
func New() Module { return Module{} }

// Register adds /mode and /model, the chat's mode and model at each spawn,
// the switches the CLI reports, and their lines in /status.
func (Module) Register(r *chat.Registry) {
	r.Command(chat.Command{Name: "mode", Help: "Show or switch the permission mode",
		Run: func(c *chat.Chat, in chat.Invocation) { setMode(c, in.Args, in.Msg.ID) }})
	r.Command(chat.Command{Name: "model", Help: "Show or switch the model (e.g. /model sonnet)",
		Run: func(c *chat.Chat, in chat.Invocation) { setModel(c, in.Args, in.Msg.ID) }})
	r.OnSpawn(func(c *chat.Chat, rc *runner.Config, _ chat.Place) {
		cfg := c.Config()
		p := c.Project(cfg)
		dropInvalidModel(c, p) // models.go
		rc.PermissionMode, rc.Model = spawnMode(c, cfg, p), spawnModel(c, p)
	})
	r.OnEvent(func(c *chat.Chat, ev runner.Event) { onSettingsEvent(c, ev) })
	r.OnApprovalRequest(func(c *chat.Chat, req *runner.ApprovalRequested) {
		req.Suggestions = allowedSuggestions(c, req.Suggestions) // modes.go
	})
	r.OnStatus(func(c *chat.Chat, info *render.StatusInfo) {
		info.Model, info.Mode = modelName(currentModel(c)), string(currentMode(c))
	})
	r.Menu("mode", chat.MenuKind{Pick: func(c *chat.Chat, _ *chat.Menu, choice string, respond func(string)) {
		applyMode(c, modeOf(choice), respond)
	}})
	r.Menu("model", chat.MenuKind{Pick: func(c *chat.Chat, _ *chat.Menu, choice string, respond func(string)) { applyModel(c, choice, respond) }})
}

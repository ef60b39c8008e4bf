package chat

import (
	"maps"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A chat stores only what its users chose with a command (/mode, /model,
// /project, /branch); everything else comes from the current config each
// time the chat's session is created, so a restart (or SIGHUP, for the
// reloadable keys) reaches existing chats. The chat's project (projects.go)
// supplies the path, binary, model, modes, env and extra args, themselves
// [claude]'s unless the project overrides them.

// spawnConfig returns how the chat's next session runs: the runner config
// from its project and choices, where it runs, and the session it resumes
// there ("" starts one).
func (c *Chat) spawnConfig(cfg *config.Config) (runner.Config, place, runner.SessionID) {
	p, pl, sid := c.spawnPlace(cfg) // projects.go
	env := maps.Clone(p.Env)
	if env == nil {
		env = map[string]string{}
	}
	if p.Home != "" {
		env["HOME"] = p.Home
	}
	rc := runner.Config{
		Binary: p.Binary, Workdir: placeDir(p, pl), ExtraArgs: p.ExtraArgs, Env: env,
		IdleTimeout: cfg.Claude.IdleTimeout.Std(), StopTimeout: cfg.Claude.StopTimeout.Std(),
	}
	if p.Remote() {
		rc.Remote = &runner.Remote{Host: p.Host, SSHOptions: p.SSHOptions}
	}
	if c.continueNext {
		rc.Continue, sid = true, "" // the CLI names the session (sessions.go)
	}
	return rc, pl, sid
}

// onSettingsEvent follows what the CLI reports about the chat's settings:
// mode switches it made, and a turn that failed on the chat's model.
func (c *Chat) onSettingsEvent(ev runner.Event) {
	switch e := ev.(type) {
	case runner.PermissionModeChanged:
		c.onModeChanged(c.sess, e.Mode)
	case runner.TurnCompleted:
		c.checkModelFailure(e)
	}
}

// reloadSessions hands reloaded timeouts to the sessions that are already
// running; everything else reloadable is read where it is used.
func (b *Engine) reloadSessions(cfg *config.Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.chats {
		if s := c.live.Load(); s != nil {
			s.SetTimeouts(cfg.Claude.IdleTimeout.Std(), cfg.Claude.StopTimeout.Std())
		}
	}
}

// Register adds /mode and /model.
func (m settingsModule) Register(r *Registry) {
	r.Command(Command{Name: "mode", Help: "Show or switch the permission mode",
		Run: func(c *Chat, in Invocation) { c.setMode(in.Args, in.Msg.ID) }})
	r.Command(Command{Name: "model", Help: "Show or switch the model (e.g. /model sonnet)",
		Run: func(c *Chat, in Invocation) { c.setModel(in.Args, in.Msg.ID) }})
	r.OnSpawn(func(c *Chat, rc *runner.Config, _ place) {
		cfg := c.b.Config()
		p := c.projectFor(cfg)
		c.dropInvalidModel(p) // models.go
		rc.PermissionMode, rc.Model = c.spawnMode(cfg, p), c.spawnModel(p)
	})
	r.OnEvent(func(c *Chat, ev runner.Event) { c.onSettingsEvent(ev) })
	r.OnApprovalRequest(func(c *Chat, req *runner.ApprovalRequested) {
		req.Suggestions = c.allowedSuggestions(req.Suggestions) // modes.go
	})
	r.OnStatus(func(c *Chat, info *render.StatusInfo) {
		info.Model, info.Mode = modelName(c.currentModel()), string(c.currentMode())
	})
	r.Menu("mode", MenuKind{Pick: func(c *Chat, _ *menu, choice string, respond func(string)) { c.applyMode(modeOf(choice), respond) }})
	r.Menu("model", MenuKind{Pick: func(c *Chat, _ *menu, choice string, respond func(string)) { c.applyModel(choice, respond) }})
}

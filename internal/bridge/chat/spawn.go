package chat

import (
	"maps"

	"github.com/untether/untether/internal/config"
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
func (c *Chat) spawnConfig(cfg *config.Config) (runner.Config, Place, runner.SessionID) {
	p, pl, sid := c.spawnPlace(cfg) // projects.go
	env := maps.Clone(p.Env)
	if env == nil {
		env = map[string]string{}
	}
	if p.Home != "" {
		env["HOME"] = p.Home
	}
	rc := runner.Config{
		Binary: p.Binary, Workdir: PlaceDir(p, pl), ExtraArgs: p.ExtraArgs, Env: env,
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

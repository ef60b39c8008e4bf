package bridge

import (
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// A chat stores only what its user chose with a command (/mode, /model);
// everything else comes from the current config each time the chat's
// session is created, so a restart (or SIGHUP, for the reloadable keys)
// reaches existing chats.

// spawnSettings returns the permission mode, model and workdir the chat's
// session starts with.
func (c *chat) spawnSettings(cfg *config.Config) (runner.PermissionMode, string, string) {
	return c.spawnMode(cfg), c.spawnModel(cfg), cfg.Claude.Workdir
}

// onSettingsEvent follows what the CLI reports about the chat's settings:
// mode switches it made, and a turn that failed on the chat's model.
func (c *chat) onSettingsEvent(ev runner.Event) {
	switch e := ev.(type) {
	case runner.PermissionModeChanged:
		c.onModeChanged(c.sess, e.Mode)
	case runner.TurnCompleted:
		c.checkModelFailure(e)
	}
}

// reloadSessions hands reloaded timeouts to the sessions that are already
// running; everything else reloadable is read where it is used.
func (b *Bridge) reloadSessions(cfg *config.Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.chats {
		if s := c.live.Load(); s != nil {
			s.SetTimeouts(cfg.Claude.IdleTimeout.Std(), cfg.Claude.StopTimeout.Std())
		}
	}
}

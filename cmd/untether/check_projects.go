package main

import (
	"context"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// checkProjects reports each project besides claude.workdir's: where it
// is, and, for one on another host with --online, whether ssh reaches the
// host, the directory exists there and claude runs there. (A project the
// config itself gets wrong is named by validation, e.g.
// "projects.api.path: directory … does not exist".)
func checkProjects(ctx context.Context, cfg *config.Config, online bool, say func(level, format string, a ...any)) {
	if len(cfg.Projects) == 0 {
		return
	}
	for _, name := range cfg.ProjectNames() {
		p, _ := cfg.Project(name)
		switch {
		case !p.Remote() && p.Binary != cfg.Claude.Binary:
			v, err := runner.CLIVersion(ctx, p.Binary)
			if err != nil {
				say("error", "project %s: claude: %v", name, err)
				continue
			}
			say("ok", "project %s: %s, claude %s", name, p.Path, v)
		case !p.Remote():
			say("ok", "project %s: %s", name, p.Path)
		case !online:
			say("ok", "project %s: %s:%s on another host (check --online reaches it)", name, p.Host, p.Path)
		default:
			r := runner.Remote{Host: p.Host, SSHOptions: p.SSHOptions}
			v, err := runner.RemoteVersion(ctx, r, p.Path, p.Binary)
			if err != nil {
				say("error", "project %s: %v", name, err)
				continue
			}
			level, msg := "ok", ""
			if ok, finding := claudeVersionFinding(v); !ok {
				level, msg = "warn", "; "+finding
			}
			say(level, "project %s: ssh %s works, %s exists there, claude %s runs there%s", name, p.Host, p.Path, v, msg)
		}
	}
}

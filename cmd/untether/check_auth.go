package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// loginWarnWithin is how close the end of the CLI's sign-in must be for
// check to warn about it.
const loginWarnWithin = 24 * time.Hour

// loginHint says how to log the CLI in, in every finding that needs it.
const loginHint = "run `claude auth login` on this machine as the user untether runs as"

// checkAuth reports whether the CLI of [claude] is logged in, and how, by
// asking it (`claude auth status`) in the environment the daemon gives it:
// the allow-listed part of ours, [claude] env and claude.home as HOME (as
// the bridge builds it, internal/bridge/settings.go). Not being logged in is
// a warning: the config is fine, and a login from the chat fixes it.
func checkAuth(ctx context.Context, cfg *config.Config, say func(level, format string, a ...any)) {
	extra := maps.Clone(cfg.Claude.Env)
	if extra == nil {
		extra = map[string]string{}
	}
	if cfg.Claude.Home != "" {
		extra["HOME"] = cfg.Claude.Home
	}
	a, err := runner.AuthStatus(ctx, cfg.Claude.Binary, runner.BuildEnv(os.Environ(), extra)...)
	if err != nil {
		say("warn", "cannot tell whether claude is logged in: %v", err)
		return
	}
	level, msg := authFinding(a, time.Now())
	say(level, "%s", msg)
}

// authFinding judges a login at now: not logged in, or a sign-in that
// ends within loginWarnWithin (or may have ended), is a warning.
func authFinding(a runner.Auth, now time.Time) (level, msg string) {
	if !a.LoggedIn {
		return "warn", "claude is not logged in, so every turn will fail: " + loginHint
	}
	how := "claude is logged in with " + a.Describe()
	end := a.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	switch {
	case a.Expired(now):
		return "warn", fmt.Sprintf("%s, but its sign-in may have ended (by %s): %s", how, end, loginHint)
	case a.ExpiresWithin(now, loginWarnWithin):
		return "warn", fmt.Sprintf("%s, but its sign-in ends within a day (by %s): %s, or use `claude setup-token` for a token that lasts a year", how, end, loginHint)
	case !a.ExpiresAt.IsZero():
		return "ok", fmt.Sprintf("%s; its sign-in ends by %s", how, end)
	}
	return "ok", how
}

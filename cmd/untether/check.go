package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// runCheck validates the config and the environment the daemon needs,
// printing one line per finding; any error makes the exit code non-zero.
func runCheck(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("check", flag.ContinueOnError)
	path := configFlag(flags)
	online := flags.Bool("online", false, "also call Telegram's getMe with the token, reach each project on another host, and try the [voice] backend")
	if code, ok := parseFlags(flags, args, stdout, stderr); !ok {
		return code
	}
	failed := false
	say := func(level, format string, a ...any) {
		if level == "error" {
			failed = true
		}
		fmt.Fprintf(stdout, "%-5s %s\n", level, fmt.Sprintf(format, a...))
	}
	cfg, err := config.Load(*path, os.Getenv)
	var invalid *config.ValidationError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		say("error", "config %s does not exist: %s", *path, missingConfigHint)
		return exitConfig
	case errors.As(err, &invalid):
		// One line per problem, each naming its key, so every mistake in
		// the file shows at once.
		say("error", "config %s is invalid (%d %s):", *path, len(invalid.Problems), plural(len(invalid.Problems), "problem", "problems"))
		for _, p := range invalid.Problems {
			say("error", "  %s: %s", p.Key, p.Message)
		}
		return exitConfig
	case err != nil:
		say("error", "config %s: %v", *path, err)
		return exitConfig
	}
	say("ok", "config %s is valid", *path)
	if fi, err := os.Stat(*path); err == nil && fi.Mode().Perm()&0o077 != 0 && !cfg.Telegram.BotToken.IsZero() && os.Getenv(config.EnvBotToken) == "" {
		say("warn", "config %s holds the bot token and is readable by group or others (mode %v); chmod 600 it", *path, fi.Mode().Perm())
	}
	trustWarnings(cfg, *path, os.Geteuid(), say) // check_trust.go
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := runner.CLIVersion(ctx, cfg.Claude.Binary); err != nil {
		say("error", "claude: %v", err)
	} else {
		ok, msg := claudeVersionFinding(v)
		level := "ok"
		if !ok {
			level = "warn"
		}
		say(level, "%s", msg)
		checkAuth(ctx, cfg, say) // check_auth.go
	}
	if err := os.MkdirAll(cfg.State.Dir, 0o700); err != nil {
		say("error", "state dir %s: %v", cfg.State.Dir, err)
	} else if f, err := os.CreateTemp(cfg.State.Dir, ".check-*"); err != nil {
		say("error", "state dir %s is not writable: %v", cfg.State.Dir, err)
	} else {
		f.Close()
		os.Remove(f.Name())
		say("ok", "state dir %s is writable", filepath.Clean(cfg.State.Dir))
	}
	checkProjects(ctx, cfg, *online, say) // check_projects.go
	voiceChecks(ctx, cfg, *online, say)   // check_voice.go
	serviceChecks(ctx, cfg, say)          // check_service.go
	if *online {
		if name, err := bridge.CheckToken(ctx, cfg); err != nil {
			say("error", "telegram: %v", err)
		} else {
			say("ok", "telegram: the token belongs to @%s", name)
		}
	}
	if failed {
		return exitConfig
	}
	return exitOK
}

// missingConfigHint tells a newcomer how to get a config file.
const missingConfigHint = "copy untether.example.toml there and fill it in, or pass --config FILE or set " + config.EnvConfigPath

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

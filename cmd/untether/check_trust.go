package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/untether/untether/internal/config"
)

// rootWarning is printed when check runs as root; tests running as root
// drop it from goldens that are not about it.
const rootWarning = "running as root: Claude's tools (any shell command) run as root too; prefer the system unit, which runs as the dedicated user \"untether\""

// trustWarnings reports settings that are valid but widen what a chat, or a
// tool Claude runs, can do: the operator should have chosen them knowingly.
func trustWarnings(cfg *config.Config, cfgPath string, euid int, say func(level, format string, a ...any)) {
	if cfg.Claude.ModeAllowed(config.PermissionBypass) {
		say("warn", "claude.allowed_modes allows bypassPermissions: any allowed user can make Claude run every tool, any shell command included, without asking")
	}
	if v, ok := cfg.Claude.Env["IS_SANDBOX"]; ok {
		say("warn", "claude.env sets IS_SANDBOX = %q: the CLI then accepts bypassPermissions as root; untether never sets it itself", v)
	}
	if n := len(cfg.Telegram.AllowedChatIDs); n > 0 {
		say("warn", "telegram.allowed_chat_ids serves %d %s: every member sees Claude's answers, diffs and command output (group_trigger = %q)",
			n, plural(n, "group", "groups"), cfg.Telegram.GroupTrigger)
	}
	if euid == 0 {
		say("warn", "%s", rootWarning)
	}
	// The units keep the token in untether.env next to the config.
	envFile := filepath.Join(filepath.Dir(cfgPath), "untether.env")
	if fi, err := os.Stat(envFile); err == nil && fi.Mode().Perm()&0o077 != 0 && fileMentions(envFile, config.EnvBotToken) {
		say("warn", "%s holds the bot token and is readable by group or others (mode %v); chmod 600 it", envFile, fi.Mode().Perm())
	}
}

// fileMentions reports whether the file at path contains s; unreadable
// files mention nothing.
func fileMentions(path, s string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(data), s)
}

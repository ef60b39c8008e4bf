package config

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/untether/untether/internal/runner"
)

// tokenPattern is the shape of a BotFather token: the bot's numeric id, a
// colon, and a URL-safe secret.
var tokenPattern = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)

// envNamePattern is a portable environment variable name (POSIX shell rules).
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks a Config built in code, with paths already expanded. Load
// and Parse call it for you. The error is a *ValidationError.
func (c *Config) Validate() error {
	var ps problems
	c.validate(false, &ps)
	return ps.err()
}

// validate appends every problem with c to ps. It never stats the claude
// binary: PATH at run time may differ, and `untether check` reports that.
func (c *Config) validate(tokenFromEnv bool, ps *problems) {
	c.validateTelegram(tokenFromEnv, ps)
	c.validateClaude(ps)
	c.validateProjects(ps) // projects.go

	positive(ps, "progress.interval", c.Progress.Interval)
	atLeastOne(ps, "progress.max_rows", c.Progress.MaxRows)
	oneOf(ps, "progress.on_finish", c.Progress.OnFinish, OnFinishValues)
	positive(ps, "progress.stall_after", c.Progress.StallAfter)
	positive(ps, "progress.stall_notify_after", c.Progress.StallNotifyAfter)
	if c.Progress.StallNotifyAfter > 0 && c.Progress.StallNotifyAfter < c.Progress.StallAfter {
		ps.add("progress.stall_notify_after", "is %s; must be at least progress.stall_after (%s)", c.Progress.StallNotifyAfter, c.Progress.StallAfter)
	}

	if n := c.Files.MaxUploadMB; n < 1 || n > MaxUploadMBLimit {
		ps.add("files.max_upload_mb", "is %d; must be between 1 and %d (Telegram's own limit is %d, more needs a self-hosted Bot API server)", n, MaxUploadMBLimit, DefaultMaxUploadMB)
	}
	positive(ps, "files.keep", c.Files.Keep)
	c.validatePhone(ps) // validate_phone.go

	c.validateRender(ps)

	absPath(ps, "state.dir", c.State.Dir, true)
	positive(ps, "state.retention", c.State.Retention)

	oneOf(ps, "log.level", c.Log.Level, LogLevels)
	oneOf(ps, "log.format", c.Log.Format, LogFormats)

	positive(ps, "daemon.drain_timeout", c.Daemon.DrainTimeout)

	c.validateAway(ps)    // validate_away.go
	c.validateService(ps) // service.go
}

// validateRender: the context thresholds are shares of the window, the
// warning below the second one.
func (c *Config) validateRender(ps *problems) {
	warn, full := c.Render.ContextWarnAt, c.Render.ContextFullAt
	if !(warn > 0 && warn < 1) {
		ps.add("render.context_warn_at", "is %v; must be a share of the context window above 0 and below 1 (0.8 warns at 80 %%)", warn)
	}
	switch {
	case !(full > 0 && full <= 1):
		ps.add("render.context_full_at", "is %v; must be a share of the context window above 0 and at most 1 (0.95 at 95 %%)", full)
	case !ps.has("render.context_warn_at") && full <= warn:
		ps.add("render.context_full_at", "is %v; must be above render.context_warn_at (%v)", full, warn)
	}
}

func (c *Config) validateTelegram(tokenFromEnv bool, ps *problems) {
	const tokenKey = "telegram.bot_token"
	// Messages here describe the token, never quote it.
	source := ""
	if tokenFromEnv {
		source = " (from " + EnvBotToken + ")"
	}
	switch tok := c.Telegram.BotToken.Reveal(); {
	case tok == "":
		ps.add(tokenKey, "required: set it here or in the %s environment variable", EnvBotToken)
	case strings.TrimSpace(tok) != tok:
		ps.add(tokenKey, "value%s has leading or trailing whitespace", source)
	case !tokenPattern.MatchString(tok):
		ps.add(tokenKey, "value%s is not a bot token: expected digits, a colon, then letters, digits, '_' or '-' (as BotFather gives it)", source)
	}

	if u, err := url.Parse(c.Telegram.APIURL); err != nil {
		ps.add("telegram.api_url", "not a URL: %v", err)
	} else if u.Scheme != "http" && u.Scheme != "https" {
		ps.add("telegram.api_url", "scheme must be http or https, got %q", u.Scheme)
	} else if u.Host == "" {
		ps.add("telegram.api_url", "must include a host, e.g. %q", DefaultAPIURL)
	} else if u.RawQuery != "" || u.Fragment != "" {
		// The bot library appends /bot<token>/<method> to this URL.
		ps.add("telegram.api_url", "must not have a query or fragment")
	}

	if len(c.Telegram.AllowedUserIDs) == 0 && !c.Telegram.AllowAnyUser {
		ps.add("telegram.allowed_user_ids", "required: list the Telegram user ids allowed to use the bot (or set allow_any_user = true to serve everyone)")
	}
	for i, id := range c.Telegram.AllowedUserIDs {
		if id <= 0 {
			ps.add("telegram.allowed_user_ids", "entry %d is %d; user ids are positive", i, id)
		}
		if what, ok := ServiceUserIDs[id]; ok {
			ps.add("telegram.allowed_user_ids", "entry %d is %d, %s, not a person; allowing it would let anyone who can post as it use the bot", i, id, what)
		}
	}
	for i, id := range c.Telegram.AllowedChatIDs {
		if id == 0 {
			ps.add("telegram.allowed_chat_ids", "entry %d is 0, which is not a chat id", i)
		}
	}

	oneOf(ps, "telegram.group_trigger", c.Telegram.GroupTrigger, GroupTriggers)

	if c.Telegram.PollTimeout < MinPollTimeout {
		ps.add("telegram.poll_timeout", "is %s; must be at least %s", c.Telegram.PollTimeout, MinPollTimeout)
	}
	positive(ps, "telegram.conflict_grace", c.Telegram.ConflictGrace)
}

func (c *Config) validateClaude(ps *problems) {
	switch b := c.Claude.Binary; {
	case b == "":
		ps.add("claude.binary", "must not be empty; use %q to find it on PATH", DefaultClaudeBinary)
	case strings.ContainsRune(b, filepath.Separator) && !filepath.IsAbs(b):
		// A relative path would resolve against the daemon's working
		// directory, which under systemd is "/".
		ps.add("claude.binary", "%q is a relative path; use a command name found on PATH or an absolute path", b)
	}

	if c.Claude.Workdir == "" {
		if len(c.Projects) == 0 {
			ps.add("claude.workdir", "required: the project directory Claude works in (or [projects.<name>] tables)")
		}
	} else if absPath(ps, "claude.workdir", c.Claude.Workdir, false) {
		isDir(ps, "claude.workdir", c.Claude.Workdir)
	}
	if c.Claude.Home != "" && absPath(ps, "claude.home", c.Claude.Home, false) {
		isDir(ps, "claude.home", c.Claude.Home)
	}

	c.validateModes(ps)
	// A model becomes the CLI's --model argument: the same rule /model
	// applies to a chat's choice.
	if runner.CheckModel(c.Claude.Model) != nil {
		ps.add("claude.model", "%q is not a model name; %s", c.Claude.Model, runner.ModelRule)
	}
	for i, m := range c.Claude.Models {
		if m == "" || runner.CheckModel(m) != nil {
			ps.add("claude.models", "entry %d is %q; %s", i, m, runner.ModelRule)
		}
	}
	checkEffort(ps, "claude.effort", c.Claude.Effort)

	if err := runner.CheckExtraArgs(c.Claude.ExtraArgs); err != nil {
		ps.add("claude.extra_args", "%v", err)
	}

	positive(ps, "claude.idle_timeout", c.Claude.IdleTimeout)
	positive(ps, "claude.approval_timeout", c.Claude.ApprovalTimeout)
	positive(ps, "claude.login_timeout", c.Claude.LoginTimeout)
	positive(ps, "claude.stop_timeout", c.Claude.StopTimeout)
	atLeastOne(ps, "claude.max_live_processes", c.Claude.MaxLiveProcesses)
	atLeastOne(ps, "claude.max_concurrent_spawns", c.Claude.MaxConcurrentSpawns)

	c.validateEnv(envKey, c.Claude.Env, ps)
}

// validateEnv checks an env table (claude.env or a project's). The CLI runs
// tools (shell commands) that could read its environment, so the bot token
// must never reach it.
func (c *Config) validateEnv(table string, env map[string]string, ps *problems) {
	token := c.Telegram.BotToken.Reveal()
	for name, value := range env {
		key := table + "." + quoteKey(name)
		switch {
		case !envNamePattern.MatchString(name):
			ps.add(key, "not a valid environment variable name (letters, digits and '_', not starting with a digit)")
		case name == EnvBotToken:
			ps.add(key, "must not be set: the Claude CLI must never see the bot token")
		case name == "HOME":
			ps.add(key, "set %s instead", strings.TrimSuffix(table, "env")+"home")
		case name == effortEnv:
			// It would override --effort and every /effort, silently.
			ps.add(key, "set %s instead; the variable would override it and /effort", strings.TrimSuffix(table, "env")+"effort")
		}
		if token != "" && strings.Contains(value, token) {
			ps.add(key, "value contains the bot token; the Claude CLI must never see it")
		}
	}
}

// validateModes checks permission_mode against allowed_modes: the operator's
// list is the ceiling for every chat, so the default mode must be in it.
func (c *Config) validateModes(ps *problems) {
	const key = "claude.allowed_modes"
	if len(c.Claude.AllowedModes) == 0 {
		ps.add(key, "must list at least one permission mode, e.g. [%q]", PermissionDefault)
	}
	for i, m := range c.Claude.AllowedModes {
		if !slices.Contains(PermissionModes, m) {
			ps.add(key, "entry %d is %q; must be one of %s", i, m, joinModes(PermissionModes))
		} else if slices.Index(c.Claude.AllowedModes, m) != i {
			ps.add(key, "lists %q twice", m)
		}
	}
	oneOf(ps, "claude.permission_mode", c.Claude.PermissionMode, PermissionModes)
	if !ps.has("claude.permission_mode") && len(c.Claude.AllowedModes) > 0 && !c.Claude.ModeAllowed(c.Claude.PermissionMode) {
		ps.add("claude.permission_mode", "is %q, which claude.allowed_modes (%s) does not allow; add it there or choose an allowed mode",
			c.Claude.PermissionMode, joinModes(c.Claude.AllowedModes))
	}
}

// effortEnv is the CLI's own effort variable, which wins over --effort and
// over a live change.
const effortEnv = "CLAUDE_CODE_EFFORT_LEVEL"

// checkEffort: an effort is empty (the CLI's default) or one of the levels
// the CLI takes, spelt exactly.
func checkEffort(ps *problems, key string, e runner.Effort) {
	if e != "" && !e.Valid() {
		ps.add(key, "is %q; must be one of %s, or empty for the CLI's default", e, joinNames(runner.Efforts))
	}
}

func joinModes(ms []PermissionMode) string { return joinNames(ms) }

// joinNames lists string-typed values, comma-separated.
func joinNames[T ~string](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// quoteKey quotes a TOML key component unless it is a bare key.
func quoteKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) < 0 {
		return k
	}
	return quoteString(k)
}

func positive(ps *problems, key string, d Duration) {
	if d <= 0 {
		ps.add(key, "is %s; must be greater than zero", d)
	}
}

func atLeastOne(ps *problems, key string, n int) {
	if n < 1 {
		ps.add(key, "is %d; must be at least 1", n)
	}
}

func oneOf[T ~string](ps *problems, key string, v T, valid []T) {
	if !slices.Contains(valid, v) {
		ps.add(key, "is %q; must be one of %s", v, joinNames(valid))
	}
}

// absPath reports whether p is absolute, adding a problem if not. Relative
// paths are rejected because the daemon's working directory (under systemd,
// "/") is rarely what the user had in mind.
func absPath(ps *problems, key, p string, required bool) bool {
	switch {
	case ps.has(key): // e.g. ~ could not be expanded
		return false
	case p == "":
		if required {
			ps.add(key, "must not be empty")
		}
		return false
	case !filepath.IsAbs(p):
		ps.add(key, "%q is not absolute; use an absolute path or one starting with ~/", p)
		return false
	}
	return true
}

func isDir(ps *problems, key, p string) {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ps.add(key, "directory %s does not exist", p)
	case err != nil:
		ps.add(key, "cannot use %s: %v", p, unwrapPathError(err))
	case !fi.IsDir():
		ps.add(key, "%s is not a directory", p)
	}
}

// unwrapPathError drops *fs.PathError's "stat <path>: " prefix, since the
// message already names the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testToken is shaped like a real token; its secret half must never appear
// in any output.
const (
	testToken       = "123456789:AAFakeTokenForTests_abcdefghijklmn"
	testTokenSecret = "AAFakeTokenForTests"
)

// envMap returns an env lookup backed by m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// minimal returns the smallest valid document for workdir. It uses dotted
// keys and no table headers, so a test can add any key with another dotted
// line (TOML forbids reopening a table that dotted keys defined).
func minimal(workdir string) string {
	return `
telegram.bot_token = "` + testToken + `"
telegram.allowed_user_ids = [1001]
claude.workdir = "` + workdir + `"
`
}

// with returns minimal(workdir) plus extra, where a dotted key in extra
// replaces the same key of the minimal document instead of duplicating it.
func with(workdir, extra string) string {
	var kept []string
	for line := range strings.Lines(minimal(workdir)) {
		key, _, ok := strings.Cut(line, " = ")
		if ok && strings.Contains(extra, key+" = ") {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "") + extra + "\n"
}

func TestParseMinimalAppliesDefaults(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	cfg, err := Parse([]byte(minimal(dir)), envMap(map[string]string{"HOME": home}))
	require.NoError(t, err)

	want := Default()
	want.Telegram.BotToken = NewSecret(testToken)
	want.Telegram.AllowedUserIDs = []int64{1001}
	want.Claude.Workdir = dir
	want.State.Dir = filepath.Join(home, ".local/state/untether")
	assert.Equal(t, want, *cfg)
	assert.Equal(t, 30*time.Second, cfg.Telegram.PollTimeout.Std())
}

func TestParseValid(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		extra string // dotted keys added to minimal(dir)
		check func(t *testing.T, c *Config)
	}{
		{"allow any user without ids", "", nil},
		{"trailing slash trimmed from api_url", "telegram.api_url = \"http://127.0.0.1:8081/\"", func(t *testing.T, c *Config) {
			assert.Equal(t, "http://127.0.0.1:8081", c.Telegram.APIURL)
		}},
		{"negative chat ids are groups", "telegram.allowed_chat_ids = [-100123, 42]", func(t *testing.T, c *Config) {
			assert.Equal(t, []int64{-100123, 42}, c.Telegram.AllowedChatIDs)
		}},
		{"poll timeout at minimum", `telegram.poll_timeout = "2s"`, func(t *testing.T, c *Config) {
			assert.Equal(t, MinPollTimeout, c.Telegram.PollTimeout)
		}},
		{"bypass when allowed", "claude.permission_mode = \"bypassPermissions\"\nclaude.allowed_modes = [\"bypassPermissions\", \"default\"]", func(t *testing.T, c *Config) {
			assert.Equal(t, PermissionBypass, c.Claude.PermissionMode)
			assert.Equal(t, []PermissionMode{PermissionBypass, PermissionDefault}, c.Claude.AllowedModes, "the list replaces the default one")
			assert.True(t, c.Claude.ModeAllowed(PermissionBypass))
			assert.False(t, c.Claude.ModeAllowed(PermissionPlan))
		}},
		{"default allowed modes leave bypass out", "", func(t *testing.T, c *Config) {
			assert.False(t, c.Claude.ModeAllowed(PermissionBypass))
			for _, m := range []PermissionMode{PermissionDefault, PermissionAcceptEdits, PermissionPlan, PermissionDontAsk} {
				assert.True(t, c.Claude.ModeAllowed(m), m)
			}
		}},
		{"model buttons", `claude.models = ["sonnet", "claude-opus-5-5"]`, func(t *testing.T, c *Config) {
			assert.Equal(t, []string{"sonnet", "claude-opus-5-5"}, c.Claude.Models)
		}},
		{"group trigger and conflict grace", "telegram.group_trigger = \"all\"\ntelegram.conflict_grace = \"30s\"", func(t *testing.T, c *Config) {
			assert.Equal(t, GroupTriggerAll, c.Telegram.GroupTrigger)
			assert.Equal(t, 30*time.Second, c.Telegram.ConflictGrace.Std())
		}},
		{"files", "files.max_upload_mb = 50\nfiles.keep = \"24h\"", func(t *testing.T, c *Config) {
			assert.Equal(t, int64(50<<20), c.Files.MaxUploadBytes())
			assert.Equal(t, 24*time.Hour, c.Files.Keep.Std())
		}},
		{"absolute binary", `claude.binary = "/opt/claude/bin/claude"`, func(t *testing.T, c *Config) {
			assert.Equal(t, "/opt/claude/bin/claude", c.Claude.Binary)
		}},
		{"extra args without managed flags", `claude.extra_args = ["--add-dir", "/srv"]`, func(t *testing.T, c *Config) {
			assert.Equal(t, []string{"--add-dir", "/srv"}, c.Claude.ExtraArgs)
		}},
		{"env map", `claude.env = { FOO = "bar", _X1 = "" }`, func(t *testing.T, c *Config) {
			assert.Equal(t, map[string]string{"FOO": "bar", "_X1": ""}, c.Claude.Env)
		}},
		{"durations with compound units", `claude.idle_timeout = "1h30m"`, func(t *testing.T, c *Config) {
			assert.Equal(t, 90*time.Minute, c.Claude.IdleTimeout.Std())
		}},
		{"enums", "progress.on_finish = \"delete\"\nlog.level = \"debug\"\nlog.format = \"json\"", func(t *testing.T, c *Config) {
			assert.Equal(t, OnFinishDelete, c.Progress.OnFinish)
			assert.Equal(t, LogDebug, c.Log.Level)
			assert.Equal(t, LogFormatJSON, c.Log.Format)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(with(dir, tt.extra)), envMap(map[string]string{"HOME": "/home/u"}))
			require.NoError(t, err)
			if tt.check != nil {
				tt.check(t, cfg)
			}
		})
	}
}

func TestParseAllowAnyUser(t *testing.T) {
	doc := "[telegram]\nbot_token = \"" + testToken + "\"\nallow_any_user = true\n[claude]\nworkdir = \"" + t.TempDir() + "\"\n"
	cfg, err := Parse([]byte(doc), envMap(map[string]string{"HOME": "/home/u"}))
	require.NoError(t, err)
	assert.True(t, cfg.Telegram.AllowAnyUser)
	assert.Empty(t, cfg.Telegram.AllowedUserIDs)
}

// problemsOf parses doc and returns the reported problems, failing unless the
// error is a *ValidationError.
func problemsOf(t *testing.T, doc string, env map[string]string) []Problem {
	t.Helper()
	if env == nil {
		env = map[string]string{"HOME": "/home/u"}
	}
	cfg, err := Parse([]byte(doc), envMap(env))
	require.Error(t, err)
	assert.Nil(t, cfg)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.NotContains(t, err.Error(), testTokenSecret)
	return ve.Problems
}

func TestParseInvalid(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))

	tests := []struct {
		name    string
		extra   string
		key     string
		message string // substring of the problem's message
	}{
		{"bad token shape", `telegram.bot_token = "not-a-token"`, "telegram.bot_token", "not a bot token"},
		{"token with space", `telegram.bot_token = "123:abc "`, "telegram.bot_token", "whitespace"},
		{"ftp api url", `telegram.api_url = "ftp://example.com"`, "telegram.api_url", "scheme must be http or https"},
		{"api url without host", `telegram.api_url = "https://"`, "telegram.api_url", "must include a host"},
		{"api url unparsable", `telegram.api_url = "http://[::1"`, "telegram.api_url", "not a URL"},
		{"api url with query", `telegram.api_url = "https://x.org/?a=b"`, "telegram.api_url", "query"},
		{"zero user id", `telegram.allowed_user_ids = [5, 0]`, "telegram.allowed_user_ids", "entry 1 is 0"},
		{"zero chat id", `telegram.allowed_chat_ids = [0]`, "telegram.allowed_chat_ids", "entry 0 is 0"},
		{"poll timeout too short", `telegram.poll_timeout = "1s"`, "telegram.poll_timeout", "at least 2s"},
		{"service account 777000", `telegram.allowed_user_ids = [5, 777000]`, "telegram.allowed_user_ids", "entry 1 is 777000, Telegram's service account"},
		{"GroupAnonymousBot", `telegram.allowed_user_ids = [1087968824]`, "telegram.allowed_user_ids", "GroupAnonymousBot"},
		{"Channel_Bot", `telegram.allowed_user_ids = [136817688]`, "telegram.allowed_user_ids", "Channel_Bot"},
		{"group trigger", `telegram.group_trigger = "always"`, "telegram.group_trigger", "mention, all"},
		{"zero conflict grace", `telegram.conflict_grace = "0s"`, "telegram.conflict_grace", "greater than zero"},
		{"bypass not allowed", `claude.permission_mode = "bypassPermissions"`, "claude.permission_mode", "claude.allowed_modes (default, acceptEdits, plan, dontAsk) does not allow"},
		{"mode outside a custom list", "claude.permission_mode = \"plan\"\nclaude.allowed_modes = [\"default\"]", "claude.permission_mode", "which claude.allowed_modes (default) does not allow"},
		{"empty allowed modes", `claude.allowed_modes = []`, "claude.allowed_modes", "at least one"},
		{"unknown allowed mode", `claude.allowed_modes = ["default", "auto"]`, "claude.allowed_modes", `entry 1 is "auto"`},
		{"duplicate allowed mode", `claude.allowed_modes = ["default", "plan", "default"]`, "claude.allowed_modes", `lists "default" twice`},
		{"model with space", `claude.models = ["son net"]`, "claude.models", "a model name is letters, digits"},
		{"model button like a shell command", `claude.models = ["sonnet", "x';touch /tmp/pwned;'"]`, "claude.models", `entry 1 is "x';touch /tmp/pwned;'"`},
		{"model like a flag", `claude.model = "--dangerously-skip-permissions"`, "claude.model", "not a model name"},
		{"zero upload size", `files.max_upload_mb = 0`, "files.max_upload_mb", "between 1 and 2000"},
		{"huge upload size", `files.max_upload_mb = 4000`, "files.max_upload_mb", "self-hosted"},
		{"zero keep", `files.keep = "0s"`, "files.keep", "greater than zero"},
		{"no files per turn", `files.max_files_per_turn = 0`, "files.max_files_per_turn", "between 1 and 500"},
		{"a flood of files per turn", `files.max_files_per_turn = 3000`, "files.max_files_per_turn", "between 1 and 500"},
		{"empty binary", `claude.binary = ""`, "claude.binary", "must not be empty"},
		{"relative binary path", `claude.binary = "bin/claude"`, "claude.binary", "relative path"},
		{"relative home", `claude.home = "home"`, "claude.home", "not absolute"},
		{"missing home", `claude.home = "/nonexistent/untether-home"`, "claude.home", "does not exist"},
		{"permission mode", `claude.permission_mode = "yolo"`, "claude.permission_mode", `is "yolo"; must be one of default, acceptEdits, plan, bypassPermissions, dontAsk`},
		{"managed extra arg", `claude.extra_args = ["--model=opus"]`, "claude.extra_args", "--model"},
		{"zero idle timeout", `claude.idle_timeout = "0s"`, "claude.idle_timeout", "greater than zero"},
		{"negative approval timeout", `claude.approval_timeout = "-1m"`, "claude.approval_timeout", "greater than zero"},
		{"zero stop timeout", `claude.stop_timeout = "0s"`, "claude.stop_timeout", "greater than zero"},
		{"zero live processes", `claude.max_live_processes = 0`, "claude.max_live_processes", "at least 1"},
		{"zero spawns", `claude.max_concurrent_spawns = -1`, "claude.max_concurrent_spawns", "at least 1"},
		{"bad env name", `claude.env = { "x y" = "b" }`, `claude.env."x y"`, "not a valid environment variable name"},
		{"token env name", `claude.env = { UNTETHER_TELEGRAM_BOT_TOKEN = "x" }`, "claude.env.UNTETHER_TELEGRAM_BOT_TOKEN", "never see the bot token"},
		{"token in env value", `claude.env = { T = "Bearer ` + testToken + `" }`, "claude.env.T", "contains the bot token"},
		{"HOME in env", `claude.env = { HOME = "/x" }`, "claude.env.HOME", "claude.home"},
		{"effort in another case", `claude.effort = "High"`, "claude.effort", "must be one of low, medium, high, xhigh, max"},
		{"effort the CLI ignores", `claude.effort = "auto"`, "claude.effort", `is "auto"`},
		{"effort variable in env", `claude.env = { CLAUDE_CODE_EFFORT_LEVEL = "max" }`, "claude.env.CLAUDE_CODE_EFFORT_LEVEL", "set claude.effort instead"},
		{"managed effort arg", `claude.extra_args = ["--effort", "max"]`, "claude.extra_args", "--effort"},
		{"context warning as a percentage", `render.context_warn_at = 80.0`, "render.context_warn_at", "above 0 and below 1"},
		{"context warning never", `render.context_warn_at = 0.0`, "render.context_warn_at", "above 0"},
		{"context warning at full", `render.context_warn_at = 1.0`, "render.context_warn_at", "below 1"},
		{"context full past the window", `render.context_full_at = 1.2`, "render.context_full_at", "at most 1"},
		{"context full below the warning", "render.context_warn_at = 0.9\nrender.context_full_at = 0.85", "render.context_full_at", "above render.context_warn_at (0.9)"},
		{"context full at the warning", "render.context_warn_at = 0.9\nrender.context_full_at = 0.9", "render.context_full_at", "above render.context_warn_at"},
		{"zero interval", `progress.interval = "0s"`, "progress.interval", "greater than zero"},
		{"zero rows", `progress.max_rows = 0`, "progress.max_rows", "at least 1"},
		{"on_finish", `progress.on_finish = "keep"`, "progress.on_finish", "finalize, delete"},
		{"relative state dir", `state.dir = "state"`, "state.dir", "not absolute"},
		{"empty state dir", `state.dir = ""`, "state.dir", "must not be empty"},
		{"log level", `log.level = "trace"`, "log.level", "debug, info, warn, error"},
		{"log format", `log.format = "xml"`, "log.format", "auto, json, console"},
		{"zero drain", `daemon.drain_timeout = "0s"`, "daemon.drain_timeout", "greater than zero"},
		{"unknown key with suggestion", `telegram.bot_tokn = "x"`, "telegram.bot_tokn", "unknown key; did you mean telegram.bot_token?"},
		{"key in wrong section", `claude.poll_timeout = "5s"`, "claude.poll_timeout", "did you mean telegram.poll_timeout?"},
		{"case differs", `log.Level = "info"`, "log.Level", "did you mean log.level?"},
		{"unknown section", `[metrics]` + "\nport = 1", "metrics", "unknown key"},
		{"unknown key without suggestion", `daemon.pidfile = "/run/x"`, "daemon.pidfile", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, with(dir, tt.extra), nil)
			require.Len(t, ps, 1, "%v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Contains(t, ps[0].Message, tt.message)
		})
	}

	t.Run("workdir", func(t *testing.T) {
		for _, tc := range []struct{ workdir, message string }{
			{"", "required"},
			{"relative/dir", "not absolute"},
			{filepath.Join(dir, "missing"), "does not exist"},
			{file, "is not a directory"},
		} {
			ps := problemsOf(t, strings.Replace(minimal(dir), dir, tc.workdir, 1), nil)
			require.Len(t, ps, 1, "%v", ps)
			assert.Equal(t, "claude.workdir", ps[0].Key)
			assert.Contains(t, ps[0].Message, tc.message)
		}
	})
}

func TestParseReportsEveryProblemSorted(t *testing.T) {
	doc := `
[telegram]
poll_timeout = "1s"
bogus = 1
[claude]
workdir = "relative"
max_live_processes = 0
[log]
level = "loud"
`
	ps := problemsOf(t, doc, nil)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	assert.Equal(t, []string{
		"claude.max_live_processes",
		"claude.workdir",
		"log.level",
		"telegram.allowed_user_ids",
		"telegram.bogus",
		"telegram.bot_token",
		"telegram.poll_timeout",
	}, keys)
}

func TestValidationErrorFormat(t *testing.T) {
	err := error(&ValidationError{Path: "/etc/u.toml", Problems: []Problem{{"a.b", "bad"}, {"c.d", "worse"}}})
	assert.Equal(t, "invalid configuration in /etc/u.toml (2 problems):\n  a.b: bad\n  c.d: worse", err.Error())
	err = &ValidationError{Problems: []Problem{{"a.b", "bad"}}}
	assert.Equal(t, "invalid configuration (1 problem):\n  a.b: bad", err.Error())
}

func TestParseDecodeErrors(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		line, col  int
		key        string
		message    string
		notContain string
	}{
		{"syntax", "[telegram]\nallowed_user_ids = [1,\n", 2, 0, "telegram.allowed_user_ids", "", ""},
		{"wrong type", "[telegram]\nallowed_user_ids = [\"me\"]\n", 2, 0, "telegram.allowed_user_ids", "incompatible types", ""},
		{"bare number duration", "[progress]\ninterval = 5\n", 2, 12, "progress.interval", `invalid duration "5"`, ""},
		{"unquoted token", "[telegram]\nbot_token = AAFakeTokenForTests_abcdefghijklmn\n", 2, 13, "telegram.bot_token", "double-quoted", testTokenSecret},
		{"unquoted token with id", "[telegram]\nbot_token = " + testToken + "\n", 2, 13, "telegram.bot_token", "double-quoted", "123456789"},
		{"section is a value", "telegram = 5\n", 1, 0, "telegram", "expected table", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), nil)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.line, de.Line, "line")
			if tt.col > 0 {
				assert.Equal(t, tt.col, de.Column, "column")
			}
			assert.Equal(t, tt.key, de.Key)
			assert.Contains(t, de.Message, tt.message)
			if tt.notContain != "" {
				assert.NotContains(t, err.Error(), tt.notContain)
			}
		})
	}
}

func TestDecodeErrorScrubsKnownToken(t *testing.T) {
	de := newDecodeError(errors.New("toml: line 3 (last key \"claude.model\"): found sekrit-value"), "sekrit-value")
	assert.Equal(t, &DecodeError{Line: 3, Key: "claude.model", Message: "found [redacted]"}, de)
	assert.Equal(t, "config:3: claude.model: found [redacted]", de.Error())
}

func TestEnvOverridesToken(t *testing.T) {
	dir := t.TempDir()
	const envToken = "42:from_env-TOKEN"
	cfg, err := Parse([]byte(minimal(dir)), envMap(map[string]string{"HOME": "/home/u", EnvBotToken: envToken}))
	require.NoError(t, err)
	assert.Equal(t, envToken, cfg.Telegram.BotToken.Reveal())

	// The token may be absent from the file entirely.
	doc := strings.Replace(minimal(dir), `telegram.bot_token = "`+testToken+`"`, "", 1)
	cfg, err = Parse([]byte(doc), envMap(map[string]string{"HOME": "/home/u", EnvBotToken: envToken}))
	require.NoError(t, err)
	assert.Equal(t, envToken, cfg.Telegram.BotToken.Reveal())

	// An empty variable is unset, not an empty token.
	cfg, err = Parse([]byte(minimal(dir)), envMap(map[string]string{"HOME": "/home/u", EnvBotToken: ""}))
	require.NoError(t, err)
	assert.Equal(t, testToken, cfg.Telegram.BotToken.Reveal())

	// A bad env token is reported as coming from the environment, unquoted.
	ps := problemsOf(t, minimal(dir), map[string]string{"HOME": "/home/u", EnvBotToken: "AAFakeTokenForTests"})
	require.Len(t, ps, 1)
	assert.Equal(t, "telegram.bot_token", ps[0].Key)
	assert.Contains(t, ps[0].Message, "(from "+EnvBotToken+")")

	// The env-provided token is also kept out of claude.env.
	doc = `claude.env = { X = "` + envToken + `" }` + "\n" + minimal(dir)
	ps = problemsOf(t, doc, map[string]string{"HOME": "/home/u", EnvBotToken: envToken})
	require.Len(t, ps, 1)
	assert.Equal(t, "claude.env.X", ps[0].Key)
}

func TestTildeExpansion(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, "proj"), 0o700))
	doc := `
claude.binary = "~/bin/claude"
claude.home = "~"
state.dir = "~/state"
` + minimal("~/proj")
	cfg, err := Parse([]byte(doc), envMap(map[string]string{"HOME": home}))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "bin/claude"), cfg.Claude.Binary)
	assert.Equal(t, home, cfg.Claude.Home)
	assert.Equal(t, filepath.Join(home, "proj"), cfg.Claude.Workdir)
	assert.Equal(t, filepath.Join(home, "state"), cfg.State.Dir)

	t.Run("no HOME", func(t *testing.T) {
		ps := problemsOf(t, minimal("~/proj"), map[string]string{})
		var keys []string
		for _, p := range ps {
			keys = append(keys, p.Key)
			assert.Contains(t, p.Message, "HOME is not set")
		}
		// state.dir defaults to a ~ path too.
		assert.Equal(t, []string{"claude.workdir", "state.dir"}, keys)
	})

	t.Run("~user is not expanded", func(t *testing.T) {
		ps := problemsOf(t, `state.dir = "~root/x"`+"\n"+minimal(home), nil)
		require.Len(t, ps, 1)
		assert.Equal(t, "state.dir", ps[0].Key)
		assert.Contains(t, ps[0].Message, "not absolute")
	})
}

func TestDefaultPath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.config/untether/untether.toml"},
		{"override", map[string]string{"HOME": "/home/u", EnvConfigPath: "/etc/untether.toml"}, "/etc/untether.toml"},
		{"override with tilde", map[string]string{"HOME": "/home/u", EnvConfigPath: "~/u.toml"}, "/home/u/u.toml"},
		{"no home", map[string]string{}, DefaultConfigPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DefaultPath(envMap(tt.env)))
		})
	}
	assert.Equal(t, DefaultConfigPath, DefaultPath(nil))
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "untether.toml")
	require.NoError(t, os.WriteFile(path, []byte(minimal(dir)), 0o600))
	cfg, err := Load(path, envMap(map[string]string{"HOME": dir}))
	require.NoError(t, err)
	assert.Equal(t, dir, cfg.Claude.Workdir)

	_, err = Load(filepath.Join(dir, "missing.toml"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "missing.toml")

	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[log]\nlevel = \"loud\"\n"+minimal(dir)), 0o600))
	_, err = Load(bad, nil)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, bad, ve.Path)

	syntax := filepath.Join(dir, "syntax.toml")
	require.NoError(t, os.WriteFile(syntax, []byte("[log\n"), 0o600))
	_, err = Load(syntax, nil)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, syntax, de.Path)
	// The toml package places errors at an end of line on the next line.
	assert.True(t, strings.HasPrefix(err.Error(), syntax+":2:5: "), err.Error())
}

func TestValidateBuiltInCode(t *testing.T) {
	c := Default()
	c.Telegram.BotToken = NewSecret(testToken)
	c.Telegram.AllowAnyUser = true
	c.Claude.Workdir = t.TempDir()
	c.State.Dir = "/var/lib/untether"
	require.NoError(t, c.Validate())

	c.Log.Format = "yaml"
	var ve *ValidationError
	require.ErrorAs(t, c.Validate(), &ve)
	assert.Equal(t, []Problem{{"log.format", `is "yaml"; must be one of auto, json, console`}}, ve.Problems)
}

func TestIntervalFor(t *testing.T) {
	p := Progress{Interval: Duration(time.Second)}
	assert.Equal(t, time.Second, p.IntervalFor(false))
	assert.Equal(t, 3*time.Second, p.IntervalFor(true))
	p.Interval = Duration(5 * time.Second)
	assert.Equal(t, 5*time.Second, p.IntervalFor(true))
}

func TestDurationString(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Millisecond, "1.5s"},
		{30 * time.Second, "30s"},
		{30 * time.Minute, "30m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{-2 * time.Minute, "-2m"},
	} {
		assert.Equal(t, tc.want, Duration(tc.d).String(), "%d", tc.d)
		var back Duration
		require.NoError(t, back.UnmarshalText([]byte(tc.want)))
		assert.Equal(t, tc.d, back.Std(), "round trip of %s", tc.want)
	}
}

func TestDuration(t *testing.T) {
	var d Duration
	require.NoError(t, d.UnmarshalText([]byte("1h2m3s")))
	assert.Equal(t, time.Hour+2*time.Minute+3*time.Second, d.Std())
	text, err := d.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "1h2m3s", string(text))
	assert.Error(t, d.UnmarshalText([]byte("5")))
}

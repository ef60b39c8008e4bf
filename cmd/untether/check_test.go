package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

func TestVersion(t *testing.T) {
	p := startProcess(t, baseEnv(t.TempDir()), "version")
	require.Equal(t, exitOK, p.waitExit())
	out := p.stdout.String()
	for _, want := range []string{"untether " + testVersion, "commit " + testCommit, "built " + testDate} {
		assert.Contains(t, out, want, "the -ldflags value reaches `untether version`")
	}
}

// checkCase is one `untether check` run compared with a golden file.
type checkCase struct {
	name string
	// edit adjusts the otherwise valid config; raw replaces the file
	// ("$DIR" is the case's directory); noFile leaves it out.
	edit   func(c *daemonConfig, dir string)
	raw    string
	noFile bool
	mode   os.FileMode // of the config file; 0600 when zero
	// args follow "check"; nil means --config <file>.
	args     func(cfgPath string) []string
	env      func(dir string) []string
	wantCode int
	// realCLI: the config runs the real CLI, whose version line (it may be
	// another than the pinned one, make conformance) the golden leaves out.
	realCLI bool
}

func TestCheck(t *testing.T) {
	tg := telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	withConfig := func(extra ...string) func(string) []string {
		return func(p string) []string { return append([]string{"--config", p}, extra...) }
	}
	// The real CLI, offline, in a HOME without a login: whether it is
	// logged in is its own answer to `claude auth status`.
	claude := claudetest.New(t, fakeapi.Script{})
	realClaude := func(apiKey bool) func(c *daemonConfig, _ string) {
		return func(c *daemonConfig, _ string) {
			c.Binary, c.Home = claude.Binary, claude.Home
			c.Env = maps.Clone(claude.Vars)
			delete(c.Env, "HOME") // claude.home sets it
			if !apiKey {
				delete(c.Env, "ANTHROPIC_API_KEY")
			}
		}
	}
	cases := []checkCase{
		{name: "good", wantCode: exitOK},
		{name: "claude-not-logged-in", wantCode: exitOK, edit: realClaude(false), realCLI: true},
		{name: "claude-api-key", wantCode: exitOK, edit: realClaude(true), realCLI: true},
		{name: "good-online", args: withConfig("--online"), wantCode: exitOK},
		{name: "online-token-refused", args: withConfig("--online"), wantCode: exitConfig,
			edit: func(c *daemonConfig, _ string) { c.Token = "42:this-token-was-revoked" }},
		{name: "token-from-env-file-readable", mode: 0o644, wantCode: exitOK,
			edit: func(c *daemonConfig, _ string) { c.Token = "" },
			env:  func(string) []string { return []string{"UNTETHER_TELEGRAM_BOT_TOKEN=" + telegramtest.DefaultToken} }},
		{name: "group-readable-token", mode: 0o640, wantCode: exitOK},
		{name: "trust-warnings", wantCode: exitOK, edit: func(c *daemonConfig, dir string) {
			c.Token = ""
			c.TelegramExtra = "allowed_chat_ids = [-100123]\ngroup_trigger = \"all\"\n"
			c.ClaudeExtra = "allowed_modes = [\"default\", \"bypassPermissions\"]\n"
			c.Env = map[string]string{"IS_SANDBOX": "1"}
			envFile := filepath.Join(dir, "untether.env")
			require.NoError(t, os.WriteFile(envFile, []byte("UNTETHER_TELEGRAM_BOT_TOKEN="+telegramtest.DefaultToken+"\n"), 0o644))
			require.NoError(t, os.Chmod(envFile, 0o644))
		}, env: func(string) []string { return []string{"UNTETHER_TELEGRAM_BOT_TOKEN=" + telegramtest.DefaultToken} }},
		{name: "world-readable-token", mode: 0o604, wantCode: exitOK},
		{name: "untested-claude", wantCode: exitOK,
			edit: func(c *daemonConfig, dir string) { c.Binary = stubClaude(t, mkdir(t, dir, "old"), "1.0.0") }},
		{name: "newer-claude", wantCode: exitOK,
			edit: func(c *daemonConfig, dir string) { c.Binary = stubClaude(t, mkdir(t, dir, "new"), "99.1.2") }},
		{name: "claude-missing", wantCode: exitConfig,
			edit: func(c *daemonConfig, dir string) { c.Binary = filepath.Join(dir, "no-such-dir", "claude") }},
		{name: "claude-not-on-path", wantCode: exitConfig,
			edit: func(c *daemonConfig, _ string) { c.Binary = "claude-not-installed" }},
		{name: "state-dir-unusable", wantCode: exitConfig,
			edit: func(c *daemonConfig, dir string) {
				c.StateDir = filepath.Join(dir, "state-is-a-file")
				require.NoError(t, os.WriteFile(c.StateDir, nil, 0o600))
			}},
		{name: "projects", wantCode: exitOK, edit: func(c *daemonConfig, dir string) {
			c.Tables = fmt.Sprintf("\n[projects.api]\npath = %q\n\n[projects.tools]\npath = %q\nbinary = %q\n\n[projects.far]\nhost = \"dev@build01\"\npath = \"~/src/far\"\n",
				mkdir(t, dir, "api"), mkdir(t, dir, "tools"), stubClaude(t, mkdir(t, dir, "tools-bin"), "2.1.330"))
		}},
		{name: "project-wrong", wantCode: exitConfig, edit: func(c *daemonConfig, dir string) {
			c.TelegramExtra = "default_project = \"api\"\n"
			c.Tables = fmt.Sprintf("\n[projects.api]\npath = %q\nallowed_modes = [\"bypassPermissions\"]\n", filepath.Join(dir, "gone"))
		}},
		{name: "project-chats-wrong", wantCode: exitConfig, edit: func(c *daemonConfig, dir string) {
			c.TelegramExtra = "allowed_chat_ids = [-100123]\n"
			c.Tables = fmt.Sprintf("\n[projects.api]\npath = %q\nallowed_chat_ids = [-100123, -100999]\n\n[projects.mine]\npath = %q\nallowed_chat_ids = [4242]\n",
				mkdir(t, dir, "api"), mkdir(t, dir, "mine"))
		}},
		{name: "config-from-env", args: func(string) []string { return nil }, wantCode: exitOK,
			env: func(dir string) []string { return []string{"UNTETHER_CONFIG=" + filepath.Join(dir, "untether.toml")} }},
		{name: "invalid-config", wantCode: exitConfig, raw: `[telegram]
bot_token = "not a token"
allowed_user_ids = []
poll_timeout = "1s"

[claude]
workdir = "relative/project"
permision_mode = "default"
max_live_processes = 0
env = { UNTETHER_TELEGRAM_BOT_TOKEN = "x" }

[daemon]
drain_timeout = "0s"
`},
		{name: "syntax-error", wantCode: exitConfig, raw: "[telegram\nbot_token = \"1:x\"\n"},
		{name: "wrong-type", wantCode: exitConfig, raw: "[telegram]\npoll_timeout = 30\n"},
		{name: "missing-file", noFile: true, wantCode: exitConfig},
		{name: "default-path-missing", noFile: true, args: func(string) []string { return nil }, wantCode: exitConfig},
		{name: "bad-flag", args: func(string) []string { return []string{"--frobnicate"} }, wantCode: exitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, code := runCheckCase(t, tg, tc)
			assert.Equal(t, tc.wantCode, code, "exit code; output:\n%s", got)
			assert.NotContains(t, got, tg.Token(), "check never prints the bot token")
			assert.NotContains(t, got, "this-token-was-revoked", "check never prints a bot token")
			golden(t, filepath.Join("check", tc.name+".golden"), got)
		})
	}
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

// runCheckCase sets up a fresh directory (config, workdir, stub claude,
// HOME), runs `untether check` and returns its normalised transcript.
func runCheckCase(t *testing.T, tg *telegramtest.Server, tc checkCase) (string, int) {
	dir := t.TempDir()
	home := mkdir(t, dir, "home")
	cfg := daemonConfig{
		Token: tg.Token(), APIURL: tg.URL(), Users: []int64{int64(alice)},
		Binary:   stubClaude(t, mkdir(t, dir, "bin"), runner.TestedVersion),
		Workdir:  mkdir(t, dir, "project"),
		StateDir: filepath.Join(dir, "state"),
	}
	if tc.edit != nil {
		tc.edit(&cfg, dir)
	}
	cfgPath := filepath.Join(dir, "untether.toml")
	content := cfg.toml()
	if tc.raw != "" {
		content = strings.ReplaceAll(tc.raw, "$DIR", dir)
	}
	if !tc.noFile {
		mode := tc.mode
		if mode == 0 {
			mode = 0o600
		}
		require.NoError(t, os.WriteFile(cfgPath, []byte(content), mode))
		require.NoError(t, os.Chmod(cfgPath, mode)) // whatever the umask
	}
	args := []string{"--config", cfgPath}
	if tc.args != nil {
		args = tc.args(cfgPath)
	}
	var env []string
	if tc.env != nil {
		env = tc.env(dir)
	}
	p := startProcess(t, baseEnv(home, env...), append([]string{"check"}, args...)...)
	code := p.waitExit()

	var b strings.Builder
	b.WriteString(strings.TrimSpace("$ untether check "+strings.Join(args, " ")) + "\n")
	b.WriteString(p.stdout.String())
	if s := p.stderr.String(); s != "" {
		b.WriteString("--- stderr\n" + s)
	}
	b.WriteString("--- exit " + itoa(code) + "\n")
	out := b.String()
	out = strings.ReplaceAll(out, tg.URL(), "$TELEGRAM")
	out = strings.ReplaceAll(out, dir, "$DIR")
	if tc.realCLI {
		level := "ok"
		ok, finding := claudeVersionFinding(claudetest.WantVersion())
		if !ok {
			level = "warn"
		}
		out = strings.Replace(out, fmt.Sprintf("%-5s %s\n", level, finding), "…     (the real CLI's version)\n", 1)
	}
	// The range first: its lower bound may be the pinned version.
	out = strings.ReplaceAll(out, runner.TestedRange.String(), "$TESTED_RANGE")
	out = strings.ReplaceAll(out, runner.TestedRange.Max, "$TESTED_MAX")
	out = strings.ReplaceAll(out, runner.TestedVersion, "$TESTED")
	out = strings.ReplaceAll(out, "warn  "+rootWarning+"\n", "") // depends on who runs the tests; see TestTrustWarnings
	return out, code
}

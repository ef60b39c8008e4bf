package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

func TestProjectSettingsInheritClaude(t *testing.T) {
	home, dir, api := t.TempDir(), t.TempDir(), t.TempDir()
	doc := with(dir, `claude.model = "opus"
claude.effort = "high"
claude.env = { SHARED = "1", OVERRIDE = "claude" }
claude.extra_args = ["--add-dir", "/docs"]
claude.allowed_modes = ["default", "plan", "acceptEdits"]
projects.api.path = "`+api+`"
projects.api.allowed_modes = ["plan"]
projects.api.permission_mode = "plan"
projects.api.env = { OVERRIDE = "api" }
projects.api.extra_args = ["--add-dir", "/api-docs"]
projects.api.effort = "max"
projects.far.path = "~/src/far"
projects.far.host = "me@far"
projects.far.home = "~/claude"
`)
	cfg, err := Parse([]byte(doc), envMap(map[string]string{"HOME": home}))
	require.NoError(t, err)

	assert.Equal(t, []string{"default", "api", "far"}, cfg.ProjectNames())

	def, ok := cfg.Project("default")
	require.True(t, ok)
	assert.Equal(t, dir, def.Path)
	assert.Equal(t, "opus", def.Model)
	assert.Equal(t, runner.EffortHigh, def.Effort)

	p, ok := cfg.Project("API") // names match case-insensitively
	require.True(t, ok)
	assert.Equal(t, "api", p.Name)
	assert.Equal(t, api, p.Path)
	assert.Equal(t, "opus", p.Model, "inherited")
	assert.Equal(t, PermissionPlan, p.PermissionMode)
	assert.Equal(t, runner.EffortMax, p.Effort, "the project's own")
	assert.True(t, p.ModeAllowed(PermissionPlan))
	assert.False(t, p.ModeAllowed(PermissionDefault), "the project narrowed the list")
	assert.Equal(t, map[string]string{"SHARED": "1", "OVERRIDE": "api"}, p.Env)
	assert.Equal(t, []string{"--add-dir", "/docs", "--add-dir", "/api-docs"}, p.ExtraArgs)
	assert.Equal(t, "claude", cfg.Claude.Env["OVERRIDE"], "merging does not touch [claude]")

	far, ok := cfg.Project("far")
	require.True(t, ok)
	assert.True(t, far.Remote())
	assert.Equal(t, "~/src/far", far.Path, "a remote path keeps its ~: it is that host's home")
	assert.Equal(t, "~/claude", far.Home)
	assert.Equal(t, runner.EffortHigh, far.Effort, "inherited")

	_, ok = cfg.Project("nope")
	assert.False(t, ok)
}

func TestProjectsWithoutWorkdir(t *testing.T) {
	api := t.TempDir()
	base := strings.Replace(minimal(""), `claude.workdir = ""`, `projects.api.path = "`+api+`"`, 1)

	ps := problemsOf(t, base, nil)
	require.Len(t, ps, 1, "%v", ps)
	assert.Equal(t, "telegram.default_project", ps[0].Key)
	assert.Contains(t, ps[0].Message, "claude.workdir is empty")

	cfg, err := Parse([]byte(base+"telegram.default_project = \"api\"\n"), envMap(map[string]string{"HOME": t.TempDir()}))
	require.NoError(t, err)
	assert.Equal(t, []string{"api"}, cfg.ProjectNames())
	assert.Equal(t, "api", cfg.DefaultProjectFor(false))
	assert.Equal(t, "api", cfg.DefaultProjectFor(true), "topics follow default_project unless told")
}

func TestProjectProblems(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, extra, key, message string }{
		{"missing path", `projects.api.description = "x"`, "projects.api.path", "required"},
		{"missing dir", `projects.api.path = "` + filepath.Join(dir, "gone") + `"`, "projects.api.path", "does not exist"},
		{"widens modes", "projects.api.path = \"" + dir + "\"\nprojects.api.allowed_modes = [\"bypassPermissions\", \"default\"]", "projects.api.allowed_modes", "may only narrow"},
		{"mode outside its list", "projects.api.path = \"" + dir + "\"\nprojects.api.allowed_modes = [\"plan\"]", "projects.api.permission_mode", "not in its allowed modes"},
		{"unknown key", "projects.api.path = \"" + dir + "\"\nprojects.api.modle = \"x\"", "projects.api.modle", "did you mean projects.api.model?"},
		{"unknown topic default", "projects.api.path = \"" + dir + "\"\ntelegram.topic_default_project = \"web\"", "telegram.topic_default_project", `"web", which is not a project`},
		{"host looks like an option", "projects.api.path = \"/x\"\nprojects.api.host = \"-oProxyCommand=sh\"", "projects.api.host", "not [user@]host"},
		{"tty for ssh", "projects.api.path = \"/x\"\nprojects.api.host = \"me@far\"\nprojects.api.ssh_options = [\"-t\"]", "projects.api.ssh_options", "-T"},
		{"relative remote path", "projects.api.path = \"src\"\nprojects.api.host = \"me@far\"", "projects.api.path", "absolute or start with ~/"},
		{"cases collide", "projects.api.path = \"" + dir + "\"\nprojects.API.path = \"" + dir + "\"", "projects.api", "only in case"},
		{"reserved name", `projects.default.path = "` + dir + `"`, "projects.default", "claude.workdir's project"},
		{"model like a shell command", "projects.api.path = \"" + dir + "\"\nprojects.api.model = \"x';touch /tmp/pwned;'\"", "projects.api.model", "not a model name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, with(dir, tt.extra), nil)
			require.Len(t, ps, 1, "%v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Contains(t, ps[0].Message, tt.message)
		})
	}
}

// TestProjectBudgets: a project's budget comes with its settings, only
// projects that set a cap are listed, and a reload applies a changed one.
func TestProjectBudgets(t *testing.T) {
	dir, api, web := t.TempDir(), t.TempDir(), t.TempDir()
	doc := with(dir, `budget.warn_at = 0.9
projects.api.path = "`+api+`"
projects.api.budget.daily_usd = 2.5
projects.web.path = "`+web+`"
projects.web.budget.warn_at = 0.5
[[schedules]]
chat = 1001
project = "API"
cron = "@daily"
prompt = "hi"
`)
	env := envMap(map[string]string{"HOME": t.TempDir()})
	cfg, err := Parse([]byte(doc), env)
	require.NoError(t, err)
	assert.Equal(t, []string{"api"}, cfg.ProjectBudgets(), "web sets no cap, default has no table")
	p, ok := cfg.Project("api")
	require.True(t, ok)
	assert.Equal(t, ProjectBudget{DailyUSD: 2.5}, p.Budget)
	def, _ := cfg.Project("default")
	assert.False(t, def.Budget.Enabled())

	next, err := Parse([]byte(strings.Replace(doc, "daily_usd = 2.5", "daily_usd = 3", 1)), env)
	require.NoError(t, err)
	reload, restart := cfg.Diff(next)
	assert.Equal(t, []string{"projects"}, reload)
	assert.Empty(t, restart)
	p, _ = cfg.Reloaded(next).Project("api")
	assert.Equal(t, 3.0, p.Budget.DailyUSD)
}

package config

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/untether/untether/internal/runner"
)

// DefaultProjectName is the project claude.workdir defines.
const DefaultProjectName = "default"

// projectsKey is the map-valued section of [projects.<name>] tables.
const projectsKey = "projects"

// Project is one [projects.<name>] table: a repository the bot can work in.
// Empty keys take [claude]'s value, so a project only says how it differs.
type Project struct {
	// Path is the project's directory. Required; on this machine it must
	// exist, on another (Host) it must be absolute or start with ~/.
	Path string `toml:"path"`
	// Description is shown next to the name by /project.
	Description string `toml:"description"`
	// Host, e.g. "user@build01", runs the CLI on that machine through the
	// system ssh client; empty runs it here.
	Host string `toml:"host"`
	// SSHOptions are extra arguments for ssh, e.g. ["-p", "2222"].
	SSHOptions []string `toml:"ssh_options"`
	// Binary is the CLI (on Host, for a remote project); empty means
	// claude.binary.
	Binary string `toml:"binary"`
	// Home is HOME for the CLI; empty means claude.home here and the login's
	// own HOME on another host.
	Home string `toml:"home"`
	// Model, Effort, PermissionMode, AllowedModes, Env and ExtraArgs
	// override [claude]'s. AllowedModes may only narrow
	// claude.allowed_modes; Env is added to claude.env and ExtraArgs to
	// claude.extra_args.
	Model          string            `toml:"model"`
	Effort         runner.Effort     `toml:"effort"`
	PermissionMode PermissionMode    `toml:"permission_mode"`
	AllowedModes   []PermissionMode  `toml:"allowed_modes"`
	Env            map[string]string `toml:"env"`
	ExtraArgs      []string          `toml:"extra_args"`
	// WorktreeBase is what /branch creates a new branch from; empty means
	// the main checkout's current HEAD.
	WorktreeBase string `toml:"worktree_base"`
	// AllowedChatIDs, when set, are the only chats that may work in the
	// project: private chats by their user's id, groups (with all their
	// forum topics) by theirs. Empty: every chat untether serves.
	AllowedChatIDs []int64 `toml:"allowed_chat_ids"`
	// Budget ([projects.<name>.budget]) caps what the project's turns may
	// spend, within [budget], which still caps everything together.
	Budget ProjectBudget `toml:"budget"`
}

// ProjectBudget is a project's own budget: [budget]'s keys, counting only
// the turns run in the project. Zero values set no cap; WarnAt 0 means
// budget.warn_at.
type ProjectBudget struct {
	DailyUSD   float64 `toml:"daily_usd"`
	MonthlyUSD float64 `toml:"monthly_usd"`
	WarnAt     float64 `toml:"warn_at"`
}

// Enabled reports whether the project has a budget.
func (b ProjectBudget) Enabled() bool { return b.DailyUSD > 0 || b.MonthlyUSD > 0 }

// budgetKey is the [projects.<name>.budget] sub-table.
const budgetKey = "budget"

// projectBudgetKeys returns the keys of a [projects.<name>.budget] table.
func projectBudgetKeys() []string {
	t := reflect.TypeFor[ProjectBudget]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("toml"))
	}
	return keys
}

// ProjectBudgets lists the projects that have a budget, by name.
func (c *Config) ProjectBudgets() []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(c.Projects)) {
		if c.Projects[n].Budget.Enabled() {
			out = append(out, n)
		}
	}
	return out
}

// BudgetApplies reports whether a budget applies to turns in project: a
// global one ([budget]), or the project's own.
func (c *Config) BudgetApplies(project string) bool {
	if c.Budget.Enabled() {
		return true
	}
	p, ok := c.Project(project)
	return ok && p.Budget.Enabled()
}

// Remote reports whether the project runs on another machine.
func (p Project) Remote() bool { return p.Host != "" }

// ProjectSettings is a project with [claude]'s values filled in: what a
// session in it runs with.
type ProjectSettings struct {
	Name string
	Project
}

// ModeAllowed reports whether the project allows mode.
func (p ProjectSettings) ModeAllowed(mode PermissionMode) bool {
	return slices.Contains(p.AllowedModes, mode)
}

// ChatAllowed reports whether the chat with id chat (a user's id for a
// private chat, a group's for a group and its topics) may work in the
// project.
func (p ProjectSettings) ChatAllowed(chat int64) bool {
	return len(p.AllowedChatIDs) == 0 || slices.Contains(p.AllowedChatIDs, chat)
}

// Project returns the settings of the project called name ("default" is
// claude.workdir's), matching the name case-insensitively when no project
// has it exactly.
func (c *Config) Project(name string) (ProjectSettings, bool) {
	base := Project{Path: c.Claude.Workdir, Binary: c.Claude.Binary, Home: c.Claude.Home, Model: c.Claude.Model,
		Effort: c.Claude.Effort, PermissionMode: c.Claude.PermissionMode, AllowedModes: c.Claude.AllowedModes,
		Env: c.Claude.Env, ExtraArgs: c.Claude.ExtraArgs}
	if name == DefaultProjectName && c.Claude.Workdir != "" {
		return ProjectSettings{Name: name, Project: base}, true
	}
	key, ok := c.projectKey(name)
	if !ok {
		return ProjectSettings{}, false
	}
	p := c.Projects[key]
	out := ProjectSettings{Name: key, Project: p}
	if out.Binary == "" {
		out.Binary = base.Binary
	}
	if out.Home == "" && !p.Remote() {
		out.Home = base.Home
	}
	if out.Model == "" {
		out.Model = base.Model
	}
	if out.Effort == "" {
		out.Effort = base.Effort
	}
	if len(out.AllowedModes) == 0 {
		out.AllowedModes = base.AllowedModes
	}
	if out.PermissionMode == "" {
		out.PermissionMode = base.PermissionMode
	}
	out.Env = maps.Clone(base.Env)
	if out.Env == nil {
		out.Env = map[string]string{}
	}
	maps.Copy(out.Env, p.Env)
	out.ExtraArgs = append(slices.Clone(base.ExtraArgs), p.ExtraArgs...)
	return out, true
}

func (c *Config) projectKey(name string) (string, bool) {
	if _, ok := c.Projects[name]; ok {
		return name, true
	}
	for k := range c.Projects {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

// ProjectNames lists the projects: "default" first when claude.workdir is
// set, then the [projects] tables by name.
func (c *Config) ProjectNames() []string {
	var names []string
	if c.Claude.Workdir != "" {
		names = append(names, DefaultProjectName)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Projects)) {
		if n != DefaultProjectName || c.Claude.Workdir == "" { // else validation refuses it
			names = append(names, n)
		}
	}
	return names
}

// DefaultProjectFor is the project of a chat (or, with topic, a forum
// topic) that has not chosen one.
func (c *Config) DefaultProjectFor(topic bool) string {
	if topic && c.Telegram.TopicDefaultProject != "" {
		return c.Telegram.TopicDefaultProject
	}
	return c.Telegram.DefaultProject
}

// projectNamePattern keeps names typeable after /project and safe in
// topic titles and file names.
var projectNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

// hostPattern is ssh's [user@]host, which must not look like an option.
var hostPattern = regexp.MustCompile(`^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._:\[\]-]+$`)

// revPattern is a git revision that cannot be taken for an option.
var revPattern = regexp.MustCompile(`^[A-Za-z0-9_./@^~{}-]+$`)

// sshManagedOptions would break the stream-json channel: a terminal mangles
// the lines, and the others detach or drop stdin.
var sshManagedOptions = []string{"-t", "-tt", "-N", "-f", "-n"}

func (c *Config) validateProjects(ps *problems) {
	names := slices.Sorted(maps.Keys(c.Projects))
	for i, name := range names {
		key := projectsKey + "." + quoteKey(name)
		switch {
		case !projectNamePattern.MatchString(name):
			ps.add(key, "the name %q must be 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
		case name == DefaultProjectName && c.Claude.Workdir != "":
			ps.add(key, "the name %q is claude.workdir's project; choose another name", name)
		case i > 0 && strings.EqualFold(names[i-1], name):
			ps.add(key, "differs from project %q only in case", names[i-1])
		}
		c.validateProject(key, c.Projects[name], ps)
	}

	names = c.ProjectNames()
	known := func(n string) bool { _, ok := c.Project(n); return ok }
	switch dp := c.Telegram.DefaultProject; {
	case len(names) == 0:
		// claude.workdir is reported missing.
	case dp == DefaultProjectName && c.Claude.Workdir == "":
		ps.add("telegram.default_project", "is %q, but claude.workdir is empty so there is no such project; set it to one of %s", dp, strings.Join(names, ", "))
	case !known(dp):
		ps.add("telegram.default_project", "is %q, which is not a project; one of %s", dp, strings.Join(names, ", "))
	}
	if tp := c.Telegram.TopicDefaultProject; tp != "" && len(names) > 0 && !known(tp) {
		ps.add("telegram.topic_default_project", "is %q, which is not a project; one of %s, or empty for telegram.default_project", tp, strings.Join(names, ", "))
	}
	// A chat that chose no project works in the default one, so that one
	// must be open to every chat.
	for _, d := range []struct{ key, name string }{
		{"telegram.default_project", c.Telegram.DefaultProject},
		{"telegram.topic_default_project", c.Telegram.TopicDefaultProject},
	} {
		if p, ok := c.Project(d.name); ok && len(p.AllowedChatIDs) > 0 && !ps.has(projectsKey+"."+quoteKey(p.Name)+".allowed_chat_ids") {
			ps.add(projectsKey+"."+quoteKey(p.Name)+".allowed_chat_ids", "is set, but the project is %s, where every chat that chose none works; "+
				"leave allowed_chat_ids empty there or make another project the default", d.key)
		}
	}
}

// validateProjectChats: a project's allowed_chat_ids name chats untether
// serves, each once.
func (c *Config) validateProjectChats(key string, p Project, ps *problems) {
	key += ".allowed_chat_ids"
	for i, id := range p.AllowedChatIDs {
		switch {
		case id == 0:
			ps.add(key, "entry %d is 0; a chat id is a user's id (a private chat) or a group's negative id", i)
		case id > 0 && !c.Telegram.AllowAnyUser && !slices.Contains(c.Telegram.AllowedUserIDs, id):
			ps.add(key, "entry %d is %d, a private chat, but that user is not in telegram.allowed_user_ids", i, id)
		case id < 0 && !slices.Contains(c.Telegram.AllowedChatIDs, id):
			ps.add(key, "entry %d is %d, a group, but it is not in telegram.allowed_chat_ids", i, id)
		case slices.Index(p.AllowedChatIDs, id) != i:
			ps.add(key, "lists %d twice", id)
		default:
			continue
		}
		return // one mistake, one problem
	}
}

func (c *Config) validateProject(key string, p Project, ps *problems) {
	remote := p.Remote()
	switch {
	case p.Path == "":
		ps.add(key+".path", "required: the project's directory")
	case remote:
		if !strings.HasPrefix(p.Path, "/") && !strings.HasPrefix(p.Path, "~/") {
			ps.add(key+".path", "%q must be absolute or start with ~/ (a directory on the project's host)", p.Path)
		}
	case absPath(ps, key+".path", p.Path, false):
		isDir(ps, key+".path", p.Path)
	}
	if strings.ContainsAny(p.Description, "\n\r") {
		ps.add(key+".description", "must be one line")
	}
	if p.Host != "" && (!hostPattern.MatchString(p.Host) || strings.HasPrefix(p.Host, "-")) {
		ps.add(key+".host", "%q is not [user@]host", p.Host)
	}
	if len(p.SSHOptions) > 0 && !remote {
		ps.add(key+".ssh_options", "only applies with host")
	}
	for i, o := range p.SSHOptions {
		if o == "" || slices.Contains(sshManagedOptions, o) {
			ps.add(key+".ssh_options", "entry %d is %q; untether runs ssh -T with the CLI's stream on stdin and stdout, so %s are not allowed", i, o, strings.Join(sshManagedOptions, ", "))
		}
	}
	if b := p.Binary; b != "" && !remote && strings.ContainsRune(b, '/') && !strings.HasPrefix(b, "/") {
		ps.add(key+".binary", "%q is a relative path; use a command name found on PATH or an absolute path", b)
	}
	if p.Home != "" && !remote && absPath(ps, key+".home", p.Home, false) {
		isDir(ps, key+".home", p.Home)
	}
	if runner.CheckModel(p.Model) != nil {
		ps.add(key+".model", "%q is not a model name; %s", p.Model, runner.ModelRule)
	}
	checkEffort(ps, key+".effort", p.Effort)
	c.validateProjectModes(key, p, ps)
	c.validateEnv(key+".env", p.Env, ps)
	if err := runner.CheckExtraArgs(p.ExtraArgs); err != nil {
		ps.add(key+".extra_args", "%v", err)
	}
	if b := p.WorktreeBase; b != "" && (!revPattern.MatchString(b) || strings.HasPrefix(b, "-")) {
		ps.add(key+".worktree_base", "%q is not a git revision", b)
	}
	c.validateProjectChats(key, p, ps)
	nonNegative(ps, key+".budget.daily_usd", p.Budget.DailyUSD)
	nonNegative(ps, key+".budget.monthly_usd", p.Budget.MonthlyUSD)
	if w := p.Budget.WarnAt; w != 0 && !(w > 0 && w <= 1) {
		ps.add(key+".budget.warn_at", "is %v; must be a share of the budget above 0 and at most 1, or 0 for budget.warn_at", w)
	}
}

// validateProjectModes: a project may narrow claude.allowed_modes, never
// widen it, and its permission mode must be one it allows.
func (c *Config) validateProjectModes(key string, p Project, ps *problems) {
	allowed := c.Claude.AllowedModes
	for i, m := range p.AllowedModes {
		switch {
		case !slices.Contains(PermissionModes, m):
			ps.add(key+".allowed_modes", "entry %d is %q; must be one of %s", i, m, joinModes(PermissionModes))
		case !c.Claude.ModeAllowed(m):
			ps.add(key+".allowed_modes", "entry %d is %q, which claude.allowed_modes (%s) does not allow; a project may only narrow that list", i, m, joinModes(c.Claude.AllowedModes))
		case slices.Index(p.AllowedModes, m) != i:
			ps.add(key+".allowed_modes", "lists %q twice", m)
		}
	}
	if ps.has(key + ".allowed_modes") {
		return // one mistake, one problem
	}
	if len(p.AllowedModes) > 0 {
		allowed = p.AllowedModes
	}
	mode, from := p.PermissionMode, key+".permission_mode"
	if mode == "" {
		mode, from = c.Claude.PermissionMode, "claude.permission_mode"
	} else if !slices.Contains(PermissionModes, mode) {
		ps.add(key+".permission_mode", "is %q; must be one of %s", mode, joinModes(PermissionModes))
		return
	}
	if !slices.Contains(allowed, mode) && slices.Contains(PermissionModes, mode) {
		ps.add(key+".permission_mode", "the project's mode (%s: %q) is not in its allowed modes (%s); set permission_mode to one of them", from, mode, joinModes(allowed))
	}
}

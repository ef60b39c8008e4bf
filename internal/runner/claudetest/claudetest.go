package claudetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/untether/untether/internal/runner/fakeapi"
)

// Version is the pinned Claude Code CLI version the real-CLI tests run
// unless $CLAUDE_VERSION names another (see WantVersion).
const Version = "2.1.328"

// Environment variables that steer Binary.
const (
	// EnvBinary overrides the CLI binary's path.
	EnvBinary = "UNTETHER_CLAUDE_BIN"
	// EnvRequire, set to "1" (as CI does), turns a missing CLI into a test
	// failure instead of a skip, so real-CLI tests can never silently skip.
	EnvRequire = "UNTETHER_REQUIRE_REAL_CLAUDE"
	// EnvVersion selects another CLI version than the pinned one, as
	// `make conformance CLAUDE_VERSION=x.y.z` does; scripts/install-claude.sh
	// reads the same variable.
	EnvVersion = "CLAUDE_VERSION"
)

// installedPath is where scripts/install-claude.sh puts a CLI version,
// relative to the module root.
func installedPath(version string) string {
	return filepath.Join(".tools", "claude-"+version, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
}

// WantVersion is the CLI version the real-CLI tests expect to run:
// $CLAUDE_VERSION when set, else the pinned Version.
func WantVersion() string { return wantVersion(os.Getenv) }

func wantVersion(getenv func(string) string) string {
	if v := getenv(EnvVersion); v != "" {
		return v
	}
	return Version
}

// BaseArgs are the flags every CLI started by Command gets: stream-json in and
// out (which requires --verbose) and permission prompts over the stdio
// control channel (without it they are silently denied).
var BaseArgs = []string{
	"-p", "--output-format", "stream-json", "--input-format", "stream-json",
	"--verbose", "--permission-prompt-tool", "stdio",
}

var (
	// ErrNotInstalled means the pinned CLI is not at its install path.
	ErrNotInstalled = errors.New("pinned Claude CLI not installed")
	// ErrNoModuleRoot means no go.mod was found above the directory.
	ErrNoModuleRoot = errors.New("no go.mod found")
	// ErrNotLoopback means a base URL would leave the machine.
	ErrNotLoopback = errors.New("base URL is not loopback")
	// ErrManagedVar means an extra variable would override the offline
	// environment.
	ErrManagedVar = errors.New("variable is managed by claudetest")
)

// Binary returns the CLI's path: $UNTETHER_CLAUDE_BIN if set, else
// <module root>/.tools/claude-<WantVersion>/…/claude.exe. When the CLI is not
// installed the test is skipped, or fails if $UNTETHER_REQUIRE_REAL_CLAUDE=1.
// A set but unusable $UNTETHER_CLAUDE_BIN always fails.
func Binary(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("claudetest: find the working directory: %v", err)
	}
	path, err := findBinary(os.Getenv, wd)
	switch {
	case err == nil:
		return path
	case errors.Is(err, ErrNotInstalled) && os.Getenv(EnvRequire) == "1":
		t.Fatalf("claudetest: %v (%s=1 forbids skipping real-CLI tests; run scripts/install-claude.sh)", err, EnvRequire)
	case errors.Is(err, ErrNotInstalled):
		t.Skipf("\n"+
			"************************************************************\n"+
			"* SKIPPING REAL-CLI TEST: %v\n"+
			"* Run scripts/install-claude.sh to install Claude Code %s,\n"+
			"* or point %s at a claude binary.\n"+
			"************************************************************",
			err, WantVersion(), EnvBinary)
	default:
		t.Fatalf("claudetest: %v", err)
	}
	return ""
}

// findBinary resolves the CLI path without a testing.TB, so the decision is
// testable.
func findBinary(getenv func(string) string, wd string) (string, error) {
	if p := getenv(EnvBinary); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("locate the pinned Claude CLI: %w", err)
	}
	p := filepath.Join(root, installedPath(wantVersion(getenv)))
	if err := checkExecutable(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %s is missing", ErrNotInstalled, p)
		}
		return "", fmt.Errorf("pinned Claude CLI %s: %w", p, err)
	}
	return p, nil
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("stat CLI binary: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file (mode %v)", p, st.Mode())
	}
	return nil
}

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find module root from %s: %w", dir, err)
	}
	for {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && st.Mode().IsRegular() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w in %s or any parent", ErrNoModuleRoot, dir)
		}
		d = parent
	}
}

// OfflineVars is the environment (besides PATH) that keeps the CLI offline
// and pointed at baseURL, with an API key. It refuses a base URL whose host
// is not 127.0.0.1, ::1 or localhost, and a relative home.
func OfflineVars(baseURL, home string) (map[string]string, error) {
	if err := checkLoopbackURL(baseURL); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(home) {
		return nil, fmt.Errorf("offline env: HOME %q is not an absolute path", home)
	}
	return map[string]string{
		"HOME":               home,
		"ANTHROPIC_BASE_URL": baseURL,
		"ANTHROPIC_API_KEY":  "test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"DISABLE_BUG_COMMAND":                      "1",
		"DISABLE_FEEDBACK_COMMAND":                 "1",
		"NO_PROXY":                                 "127.0.0.1,localhost",
	}, nil
}

func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: parse %q: %w", ErrNotLoopback, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: %q has scheme %q, want http", ErrNotLoopback, raw, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: %q carries user info", ErrNotLoopback, raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	// Exactly 127.0.0.1 and ::1: the fake listens there, and anything wider
	// (another 127/8 address, a name) is a sign of a mistake.
	if ip := net.ParseIP(host); ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)) {
		return nil
	}
	return fmt.Errorf("%w: %q has host %q, want 127.0.0.1, ::1 or localhost", ErrNotLoopback, raw, host)
}

// compactionVars turn the CLI's compaction off. They match the DISABLE_
// prefix but only change what the CLI does near a full context, never
// where it connects, so tests of that may set them.
var compactionVars = map[string]bool{"DISABLE_AUTO_COMPACT": true, "DISABLE_COMPACT": true}

// managedVar reports whether an extra variable could undo the offline
// guarantee: it is part of the offline env, or steers the API endpoint,
// credentials, the model provider (Bedrock/Vertex/… send traffic elsewhere)
// or proxies.
func managedVar(key string) bool {
	k := strings.ToUpper(key)
	switch {
	case compactionVars[k]:
		return false
	case k == "PATH", k == "HOME", k == "NO_PROXY", k == "CLAUDE_CODE_MAX_RETRIES",
		strings.HasPrefix(k, "DISABLE_"),
		strings.HasPrefix(k, "ANTHROPIC_"),
		strings.HasPrefix(k, "CLAUDE_CODE_USE_"),
		strings.HasPrefix(k, "CLAUDE_CODE_DISABLE_"),
		strings.HasPrefix(k, "CLAUDE_CODE_OAUTH"),
		strings.HasPrefix(k, "AWS_"), strings.HasPrefix(k, "GOOGLE_"), strings.HasPrefix(k, "CLOUD_ML_"),
		strings.HasSuffix(k, "_PROXY"):
		return true
	}
	return false
}

// Option adjusts an Env built by New.
type Option func(*options)

type options struct {
	binary     string
	maxRetries *int
	oauthToken string
	extra      map[string]string
}

// WithMaxRetries sets CLAUDE_CODE_MAX_RETRIES, so scripted API errors run out
// of retries quickly (the default is 10, with growing backoff).
func WithMaxRetries(n int) Option { return func(o *options) { o.maxRetries = &n } }

// WithOAuthToken authenticates with CLAUDE_CODE_OAUTH_TOKEN instead of
// ANTHROPIC_API_KEY, as a subscription user does. Only then does the CLI emit
// rate_limit_event frames for anthropic-ratelimit-unified-* headers, and its
// default model differs.
func WithOAuthToken(token string) Option { return func(o *options) { o.oauthToken = token } }

// WithVar adds one more variable to the CLI's environment. New fails the test
// if the key could override the offline environment (see the package doc).
func WithVar(key, value string) Option {
	return func(o *options) {
		if o.extra == nil {
			o.extra = map[string]string{}
		}
		o.extra[key] = value
	}
}

// WithBinary uses path as the CLI instead of Binary's lookup, e.g. a stand-in
// program for tests of the plumbing itself.
func WithBinary(path string) Option { return func(o *options) { o.binary = path } }

// Env is a prepared real-CLI test environment: a fake API, a private HOME and
// working directory, and the CLI's variables.
type Env struct {
	Binary  string
	API     *fakeapi.Server
	Home    string
	Workdir string
	// Vars is the CLI's environment apart from PATH (and IS_SANDBOX, which
	// Environ adds when needed). Tests must not loosen it.
	Vars map[string]string

	t testing.TB
}

// New prepares an Env: it finds the CLI (skipping the test when it is not
// installed, see Binary), starts a fakeapi server with script, and makes a
// temporary HOME and working directory. Everything is cleaned up with the
// test.
func New(t testing.TB, script fakeapi.Script, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := o.binary
	if bin == "" {
		bin = Binary(t) // first: a skip should not pay for anything else
	}
	api := fakeapi.New(t, script)
	home, workdir := realTempDir(t), realTempDir(t)
	vars, err := OfflineVars(api.URL(), home)
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	if o.oauthToken != "" {
		delete(vars, "ANTHROPIC_API_KEY")
		vars["CLAUDE_CODE_OAUTH_TOKEN"] = o.oauthToken
	}
	if o.maxRetries != nil {
		vars["CLAUDE_CODE_MAX_RETRIES"] = strconv.Itoa(*o.maxRetries)
	}
	for k, v := range o.extra {
		if managedVar(k) || strings.ContainsAny(k, "=\x00") {
			t.Fatalf("claudetest: WithVar(%q): %v", k, ErrManagedVar)
		}
		vars[k] = v
	}
	return &Env{Binary: bin, API: api, Home: home, Workdir: workdir, Vars: vars, t: t}
}

// realTempDir is t.TempDir with symlinks resolved, so it compares equal to the
// cwd the CLI reports.
func realTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("claudetest: resolve temp dir: %v", err)
	}
	return d
}

// Environ is the complete environment for a CLI started with args: PATH,
// Vars and, when args ask for bypassPermissions while running as root,
// IS_SANDBOX=1 (without it the CLI refuses to start). Sorted, "KEY=value".
func (e *Env) Environ(args ...string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path}
	for k, v := range e.Vars {
		env = append(env, k+"="+v)
	}
	if NeedsSandboxVar(os.Geteuid(), args) {
		env = append(env, "IS_SANDBOX=1")
	}
	slices.Sort(env)
	return env
}

// NeedsSandboxVar reports whether a CLI started by euid with args needs
// IS_SANDBOX=1: bypassPermissions (or --dangerously-skip-permissions) as root.
func NeedsSandboxVar(euid int, args []string) bool {
	if euid != 0 {
		return false
	}
	for i, a := range args {
		switch {
		case a == "--dangerously-skip-permissions",
			a == "--permission-mode=bypassPermissions",
			a == "--permission-mode" && i+1 < len(args) && args[i+1] == "bypassPermissions":
			return true
		}
	}
	return false
}

// Command is the raw CLI command: BaseArgs then args, run in Workdir with
// Environ(args) as its whole environment. The caller sets up pipes, starts
// and waits for it. Cancelling ctx kills the process; so does the test's
// cleanup if it is still running, so the temp dirs can be removed.
func (e *Env) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Binary, append(slices.Clone(BaseArgs), args...)...)
	cmd.Dir = e.Workdir
	cmd.Env = e.Environ(args...)
	// After a kill, do not wait forever for pipes a grandchild (a Bash tool
	// command) may still hold open.
	cmd.WaitDelay = 10 * time.Second
	if e.t != nil {
		e.t.Cleanup(func() {
			if cmd.Process != nil {
				// Best effort: after a Wait this just reports the process
				// finished; an unwaited exited process is a zombie whose pid
				// cannot have been reused.
				_ = cmd.Process.Kill()
			}
		})
	}
	return cmd
}

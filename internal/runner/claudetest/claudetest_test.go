package claudetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/fakeapi"
)

func TestOfflineVars(t *testing.T) {
	tests := []struct {
		url     string
		home    string
		wantErr error // nil: accepted
	}{
		{"http://127.0.0.1:8080", "/h", nil},
		{"http://[::1]:8080", "/h", nil},
		{"http://localhost:8080", "/h", nil},
		{"https://127.0.0.1", "/h", nil},
		{"https://api.anthropic.com", "/h", ErrNotLoopback},
		{"http://127.0.0.2:8080", "/h", ErrNotLoopback},
		{"http://10.0.0.1:8080", "/h", ErrNotLoopback},
		{"http://0.0.0.0:8080", "/h", ErrNotLoopback},
		{"http://localhost.example.com", "/h", ErrNotLoopback},
		{"http://user:pw@127.0.0.1:8080", "/h", ErrNotLoopback},
		{"ftp://127.0.0.1", "/h", ErrNotLoopback},
		{"127.0.0.1:8080", "/h", ErrNotLoopback},
		{"", "/h", ErrNotLoopback},
		{"http://127.0.0.1:8080", "relative/home", nil}, // error, but not a URL one
	}
	for _, tc := range tests {
		t.Run(tc.url+"|"+tc.home, func(t *testing.T) {
			vars, err := OfflineVars(tc.url, tc.home)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Nil(t, vars)
				return
			}
			if !filepath.IsAbs(tc.home) {
				require.Error(t, err)
				assert.NotErrorIs(t, err, ErrNotLoopback)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, map[string]string{
				"HOME":               tc.home,
				"ANTHROPIC_BASE_URL": tc.url,
				"ANTHROPIC_API_KEY":  "test",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
				"DISABLE_TELEMETRY":                        "1",
				"DISABLE_AUTOUPDATER":                      "1",
				"DISABLE_ERROR_REPORTING":                  "1",
				"DISABLE_BUG_COMMAND":                      "1",
				"DISABLE_FEEDBACK_COMMAND":                 "1",
				"NO_PROXY":                                 "127.0.0.1,localhost",
			}, vars)
		})
	}
}

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	deep := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	got, err := ModuleRoot(deep)
	require.NoError(t, err)
	assert.Equal(t, root, got)

	// This package's own tests run inside the untether module.
	wd, err := os.Getwd()
	require.NoError(t, err)
	got, err = ModuleRoot(wd)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(got, "scripts", "install-claude.sh"))
}

func TestFindBinary(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	installed := filepath.Join(root, installedPath(Version))
	exe := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	notExe := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(notExe, []byte("x"), 0o644))

	env := func(bin string) func(string) string {
		return func(k string) string {
			if k == EnvBinary {
				return bin
			}
			return ""
		}
	}
	// Not installed yet: ErrNotInstalled, which Binary turns into a skip.
	_, err := findBinary(env(""), root)
	require.ErrorIs(t, err, ErrNotInstalled)
	assert.Contains(t, err.Error(), installed)

	// The override wins, and a bad override is not "not installed" (no skip).
	got, err := findBinary(env(exe), root)
	require.NoError(t, err)
	assert.Equal(t, exe, got)
	_, err = findBinary(env(notExe), root)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNotInstalled)
	_, err = findBinary(env(filepath.Join(root, "missing")), root)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNotInstalled)

	// Installed at the pinned path.
	require.NoError(t, os.MkdirAll(filepath.Dir(installed), 0o755))
	require.NoError(t, os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755))
	got, err = findBinary(env(""), filepath.Join(root))
	require.NoError(t, err)
	assert.Equal(t, installed, got)

	// $CLAUDE_VERSION looks for that version's install instead.
	other := func(k string) string {
		if k == EnvVersion {
			return "9.9.9"
		}
		return ""
	}
	_, err = findBinary(other, root)
	require.ErrorIs(t, err, ErrNotInstalled)
	assert.Contains(t, err.Error(), filepath.Join(root, installedPath("9.9.9")))
	assert.Equal(t, "9.9.9", wantVersion(other))
	assert.Equal(t, Version, wantVersion(env("")))

	// Outside any module.
	_, err = findBinary(env(""), "/")
	require.ErrorIs(t, err, ErrNoModuleRoot)
}

func TestInstalledPathMatchesInstallScript(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := ModuleRoot(wd)
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join(root, "scripts", "install-claude.sh"))
	require.NoError(t, err)
	assert.Contains(t, string(script), `CLAUDE_VERSION="${CLAUDE_VERSION:-`+Version+`}"`)
	assert.Contains(t, string(script), `/node_modules/@anthropic-ai/claude-code/bin/claude.exe`)
}

func TestNeedsSandboxVar(t *testing.T) {
	tests := []struct {
		euid int
		args []string
		want bool
	}{
		{0, nil, false},
		{0, []string{"--permission-mode", "bypassPermissions"}, true},
		{0, []string{"--permission-mode=bypassPermissions"}, true},
		{0, []string{"--dangerously-skip-permissions"}, true},
		{0, []string{"--permission-mode", "plan"}, false},
		{0, []string{"--permission-mode"}, false},
		{0, []string{"bypassPermissions"}, false},
		{1000, []string{"--permission-mode", "bypassPermissions"}, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, NeedsSandboxVar(tc.euid, tc.args), "euid %d args %q", tc.euid, tc.args)
	}
}

func TestNewAndCommand(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-real-key-must-not-leak")
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")

	e := New(t, fakeapi.Script{}, WithBinary("/bin/true"), WithMaxRetries(2), WithVar("EXTRA_FLAG", "x"))
	assert.Equal(t, "/bin/true", e.Binary)
	assert.DirExists(t, e.Home)
	assert.DirExists(t, e.Workdir)
	assert.NotEqual(t, e.Home, e.Workdir)
	assert.Equal(t, e.API.URL(), e.Vars["ANTHROPIC_BASE_URL"])
	assert.True(t, strings.HasPrefix(e.API.URL(), "http://127.0.0.1:"))
	assert.Equal(t, "2", e.Vars["CLAUDE_CODE_MAX_RETRIES"])
	assert.Equal(t, "x", e.Vars["EXTRA_FLAG"])

	cmd := e.Command(context.Background(), "--permission-mode", "bypassPermissions")
	assert.Equal(t, e.Workdir, cmd.Dir)
	assert.Equal(t, append(append([]string{"/bin/true"}, BaseArgs...), "--permission-mode", "bypassPermissions"), cmd.Args)

	// The environment is PATH + Vars (+ IS_SANDBOX as root) and nothing else.
	want := map[string]string{"PATH": os.Getenv("PATH")}
	for k, v := range e.Vars {
		want[k] = v
	}
	if os.Geteuid() == 0 {
		want["IS_SANDBOX"] = "1"
	}
	got := map[string]string{}
	for _, kv := range cmd.Env {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, kv)
		_, dup := got[k]
		require.False(t, dup, "duplicate %s", k)
		got[k] = v
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "test", got["ANTHROPIC_API_KEY"])
	assert.NotContains(t, got, "HTTPS_PROXY")

	plain := e.Command(context.Background())
	assert.NotContains(t, strings.Join(plain.Env, "\n"), "IS_SANDBOX")
	require.NoError(t, plain.Run(), "the stand-in binary runs with this environment")
}

func TestWithOAuthToken(t *testing.T) {
	e := New(t, fakeapi.Script{}, WithBinary("/bin/true"), WithOAuthToken("sk-ant-oat01-fake"))
	assert.Equal(t, "sk-ant-oat01-fake", e.Vars["CLAUDE_CODE_OAUTH_TOKEN"])
	assert.NotContains(t, e.Vars, "ANTHROPIC_API_KEY", "with both set the CLI would use the key")
}

func TestManagedVar(t *testing.T) {
	for _, k := range []string{
		"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "anthropic_auth_token", "HOME", "PATH", "NO_PROXY",
		"HTTPS_PROXY", "http_proxy", "ALL_PROXY", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "CLAUDE_CODE_OAUTH_TOKEN",
		"CLAUDE_CODE_MAX_RETRIES", "AWS_REGION", "GOOGLE_APPLICATION_CREDENTIALS",
	} {
		assert.True(t, managedVar(k), k)
	}
	for _, k := range []string{"IS_SANDBOX", "TZ", "LANG", "CLAUDE_CODE_EXTRA", "DISABLE_AUTO_COMPACT", "disable_compact"} {
		assert.False(t, managedVar(k), k)
	}
}

// fatalTB records Fatalf and stops the goroutine like the real one, so a
// test can check that New refuses something.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestWithVarRefusesManagedKeys(t *testing.T) {
	for _, k := range []string{"ANTHROPIC_BASE_URL", "HTTPS_PROXY", "BAD=KEY"} {
		ftb := &fatalTB{TB: t}
		done := make(chan *Env)
		go func() {
			var e *Env
			defer func() { done <- e }()
			e = New(ftb, fakeapi.Script{}, WithBinary("/bin/true"), WithVar(k, "http://evil.example"))
		}()
		assert.Nil(t, <-done, "New returned for %s", k)
		assert.Contains(t, ftb.msg, ErrManagedVar.Error(), k)
	}
}

// TestPersonPATH: the person's claude passes the CLI the offline
// environment with the caller's HOME, PATH and TERM, and nothing else.
func TestPersonPATH(t *testing.T) {
	envBin, err := exec.LookPath("env")
	require.NoError(t, err)
	e := New(t, fakeapi.Script{}, WithBinary(envBin), WithVar("QUOTE_ME", "it's $x"))
	dir := e.PersonPATH()
	path := dir + ":" + os.Getenv("PATH")
	cmd := exec.Command("sh", "-c", "claude")
	cmd.Env = []string{"HOME=/home/person", "PATH=" + path, "ANTHROPIC_API_KEY=sk-real-key-must-not-leak", "HTTPS_PROXY=http://proxy.example:3128"}
	out, err := cmd.Output()
	require.NoError(t, err)
	want := []string{"HOME=/home/person", "PATH=" + path, "TERM=dumb"}
	for k, v := range e.Vars {
		if k != "HOME" {
			want = append(want, k+"="+v)
		}
	}
	assert.ElementsMatch(t, want, strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"))
}

// TestLoopbackOnly: the test runs again in a namespace whose only
// interface is loopback, up, where 127.0.0.1 answers.
func TestLoopbackOnly(t *testing.T) {
	if !LoopbackOnly(t) {
		return
	}
	ifaces, err := net.Interfaces()
	require.NoError(t, err)
	require.Len(t, ifaces, 1, "%+v", ifaces)
	assert.Equal(t, "lo", ifaces[0].Name)
	assert.NotZero(t, ifaces[0].Flags&net.FlagUp)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	c.Close()
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
)

// unit is a parsed systemd unit file: section → key → values, one per
// assignment, in file order.
type unit map[string]map[string][]string

// parseUnit reads the subset of systemd's INI syntax the units use:
// [Section] headers, Key=Value, comments and backslash continuations.
func parseUnit(path string) (unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parse unit: %w", err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	n, pending := 0, ""
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || line[0] == '#' || line[0] == ';') {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			pending += rest + " "
			continue
		}
		line, pending = pending+line, ""
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("%s:%d: bad section header %q", path, n, line)
			}
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			return nil, fmt.Errorf("%s:%d: not a key=value line in a section: %q", path, n, line)
		}
		u[section][strings.TrimSpace(key)] = append(u[section][strings.TrimSpace(key)], strings.TrimSpace(value))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse unit %s: %w", path, err)
	}
	return u, nil
}

// one returns the single value of key, failing if it is missing or set
// twice (for most keys a second assignment silently wins, hiding mistakes).
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	vals := u[section][key]
	require.Len(t, vals, 1, "[%s] %s= must be set exactly once", section, key)
	return vals[0]
}

// words returns every space-separated item of every assignment of key.
func (u unit) words(section, key string) []string {
	var out []string
	for _, v := range u[section][key] {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

var spanPart = regexp.MustCompile(`^(\d+)([a-z]*)$`)

// parseTimespan reads systemd time spans such as "3min", "90", "2min 30s".
func parseTimespan(s string) (time.Duration, error) {
	units := map[string]time.Duration{
		"": time.Second, "s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"ms": time.Millisecond, "msec": time.Millisecond, "us": time.Microsecond, "usec": time.Microsecond,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	}
	var total time.Duration
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty time span")
	}
	for _, f := range fields {
		m := spanPart.FindStringSubmatch(f)
		if m == nil {
			return 0, fmt.Errorf("time span %q: cannot read %q", s, f)
		}
		unit, ok := units[m[2]]
		if !ok {
			return 0, fmt.Errorf("time span %q: unknown unit %q", s, m[2])
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, fmt.Errorf("time span %q: %w", s, err)
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

func TestParseTimespan(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3min": 3 * time.Minute, "90": 90 * time.Second, "2min 30s": 150 * time.Second, "1h": time.Hour, "500ms": 500 * time.Millisecond,
	} {
		got, err := parseTimespan(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "3 fortnights", "-1s", "1.5s"} {
		_, err := parseTimespan(bad)
		assert.Error(t, err, bad)
	}
}

var unitFiles = []string{"untether.service", "untether-user.service"}

func unitPath(name string) string { return filepath.Join("..", "..", "deploy", "systemd", name) }

// TestSystemdUnits checks the promises the unit files make to the daemon
// and the daemon makes to them.
func TestSystemdUnits(t *testing.T) {
	drain := config.Default().Daemon.DrainTimeout.Std()
	for _, name := range unitFiles {
		t.Run(name, func(t *testing.T) {
			u, err := parseUnit(unitPath(name))
			require.NoError(t, err)
			const svc = "Service"

			// The daemon speaks sd_notify: READY=1, STATUS=, WATCHDOG=1,
			// STOPPING=1, and only the main process may.
			assert.Equal(t, "notify", u.one(t, svc, "Type"))
			assert.Equal(t, "main", u.one(t, svc, "NotifyAccess"))
			wd, err := parseTimespan(u.one(t, svc, "WatchdogSec"))
			require.NoError(t, err)
			// A healthy daemon may go 2×poll_timeout+30s (90s by default)
			// without a successful poll, so a shorter watchdog would kill it
			// during a Telegram hiccup that it survives by itself.
			assert.GreaterOrEqual(t, wd, time.Minute, "WatchdogSec")

			assert.Equal(t, "on-failure", u.one(t, svc, "Restart"))
			// Exit codes a restart cannot fix must not loop.
			assert.Subset(t, u.words(svc, "RestartPreventExitStatus"),
				[]string{strconv.Itoa(exitConfig), strconv.Itoa(exitState), strconv.Itoa(exitFatalTG)})
			assert.NotContains(t, u.words(svc, "RestartPreventExitStatus"), strconv.Itoa(exitRuntime),
				"runtime failures are what Restart= is for")

			// SIGTERM reaches the daemon alone (it stops its CLIs itself),
			// and systemd waits out a full drain before killing.
			assert.Equal(t, "mixed", u.one(t, svc, "KillMode"))
			stop, err := parseTimespan(u.one(t, svc, "TimeoutStopSec"))
			require.NoError(t, err)
			assert.Greater(t, stop, drain+drainMargin,
				"TimeoutStopSec must outlast the default drain_timeout (%v) plus the daemon's margin (%v)", drain, drainMargin)

			assert.NotEmpty(t, u.one(t, svc, "EnvironmentFile"), "the token comes from an EnvironmentFile")
			assert.Regexp(t, `/untether run --config \S+\.toml$`, u.one(t, svc, "ExecStart"))
			assert.Contains(t, u.one(t, svc, "ExecReload"), "-HUP $MAINPID", "systemctl reload sends SIGHUP")

			// Hardening that keeps Claude's workdir and HOME writable.
			assert.Equal(t, "yes", u.one(t, svc, "NoNewPrivileges"))
			assert.Equal(t, "yes", u.one(t, svc, "PrivateTmp"))
			assert.Equal(t, "strict", u.one(t, svc, "ProtectSystem"))
			assert.NotEmpty(t, u.words(svc, "ReadWritePaths"))
			assert.Empty(t, u[svc]["MemoryDenyWriteExecute"], "the CLI's JavaScript JIT needs W+X memory")

			// Files in a shared project stay usable by the group, never by
			// others; the daemon keeps its state private by itself.
			assert.Equal(t, "0027", u.one(t, svc, "UMask"))
			// Bounded: a runaway tool (fork bomb, leak) cannot take the
			// machine down with it.
			assert.NotEmpty(t, u.one(t, svc, "TasksMax"))
			assert.NotEmpty(t, u.one(t, svc, "MemoryHigh"))

			assert.NotEmpty(t, u.one(t, "Install", "WantedBy"))
		})
	}
	t.Run("system unit runs as a dedicated user", func(t *testing.T) {
		u, err := parseUnit(unitPath("untether.service"))
		require.NoError(t, err)
		user := u.one(t, "Service", "User")
		assert.NotContains(t, []string{"", "root", "0"}, user)
		// The CLI's HOME (the user's home, the StateDirectory) stays
		// writable under ProtectSystem=strict.
		assert.Equal(t, "untether", u.one(t, "Service", "StateDirectory"))
		assert.Equal(t, "0700", u.one(t, "Service", "StateDirectoryMode"), "HOME holds the CLI's login")
	})
	t.Run("user unit keeps persistence paths read-only", func(t *testing.T) {
		u, err := parseUnit(unitPath("untether-user.service"))
		require.NoError(t, err)
		ro := u.words("Service", "ReadOnlyPaths")
		for _, p := range []string{"-%h/.ssh", "-%h/.bashrc", "-%h/.config"} {
			assert.Contains(t, ro, p)
		}
		assert.Empty(t, u["Service"]["User"], "a user service runs as its user")
	})
	t.Run("user unit hides the runtime directory but the notify socket", func(t *testing.T) {
		u, err := parseUnit(unitPath("untether-user.service"))
		require.NoError(t, err)
		const svc = "Service"
		// %t holds sockets that act outside the sandbox for whoever
		// connects (the user bus and manager, ssh-agent, gpg-agent,
		// docker): it must be an empty tmpfs...
		assert.True(t, hidesRuntimeDir(u), "TemporaryFileSystem= covers %t")
		// ...with only the user manager's notify socket ($NOTIFY_SOCKET,
		// %t/systemd/notify) bound back, writable: connect(2) needs it.
		assert.Contains(t, u.words(svc, "BindPaths"), "%t/systemd/notify")
		for _, key := range []string{"BindPaths", "BindReadOnlyPaths", "ReadWritePaths", "ReadOnlyPaths", "ExecPaths"} {
			for _, w := range u.words(svc, key) {
				path := strings.TrimLeft(w, "-+")
				if i := strings.Index(path, ":"); i >= 0 && key != "ReadWritePaths" && key != "ReadOnlyPaths" {
					path = path[:i] // BindPaths=SRC:DST: what matters is what is bound from %t
				}
				if strings.HasPrefix(path, "%t") {
					assert.Equal(t, "%t/systemd/notify", path, "%s= brings back part of %%t", key)
				}
			}
		}
		assert.Equal(t, "main", u.one(t, svc, "NotifyAccess"), "nothing but the daemon is heard on the socket")
	})
}

// hidesRuntimeDir reports whether the unit replaces the runtime directory
// (%t) with an empty tmpfs.
func hidesRuntimeDir(u unit) bool {
	for _, w := range u.words("Service", "TemporaryFileSystem") {
		if path, _, _ := strings.Cut(w, ":"); path == "%t" {
			return true
		}
	}
	return false
}

// TestSystemdAnalyzeVerify lets systemd itself check the units' syntax.
// Without systemd-analyze it skips, or fails under
// UNTETHER_REQUIRE_SYSTEM_TOOLS=1 (scripts/test.sh installs it and sets it).
func TestSystemdAnalyzeVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("UNTETHER_REQUIRE_SYSTEM_TOOLS") == "1" {
			t.Fatal("systemd-analyze is not installed (Debian package systemd); scripts/test.sh installs it")
		}
		t.Skip("systemd-analyze not installed")
	}
	for _, name := range unitFiles {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(unitPath(name))
			require.NoError(t, err)
			// verify insists that ExecStart exists; point it at the binary
			// under test.
			text := regexp.MustCompile(`(?m)^ExecStart=\S+`).ReplaceAllString(string(data), "ExecStart="+binary)
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			out, err := exec.Command(tool, "verify", path).CombinedOutput()
			require.NoError(t, err, "systemd-analyze verify %s:\n%s", name, out)
			for _, bad := range []string{"Unknown key", "Unknown section", "Failed to parse", "Invalid"} {
				assert.NotContains(t, string(out), bad)
			}
		})
	}
}

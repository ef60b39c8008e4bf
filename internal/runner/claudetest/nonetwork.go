package claudetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NoNetwork returns the path of a wrapper script that runs binary in a new
// network namespace with no interface up, not even loopback (`unshare -n`
// as root, `unshare -rn` otherwise): for a test of a CLI command that would
// reach past the fake API whatever the offline env says. Two do (verified
// with 2.1.328): `claude auth status` with a stored claude.ai login looks up
// api.anthropic.com, and `claude auth login` sends a pasted code to
// platform.claude.com. Nothing inside can reach the fake API either.
//
// When no namespace can be made the test is skipped, or fails under
// $UNTETHER_REQUIRE_REAL_CLAUDE=1, like a missing CLI.
func NoNetwork(t testing.TB, binary string) string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		cannotIsolate(t, err.Error())
	}
	var how []string
	var tried []string
	for _, try := range [][]string{{"-n"}, {"-r", "-n"}} {
		out, err := exec.Command(unshare, append(try, "--", "true")...).CombinedOutput()
		if err == nil {
			how = try
			break
		}
		tried = append(tried, "unshare "+strings.Join(try, " ")+": "+strings.TrimSpace(string(out)))
	}
	if how == nil {
		cannotIsolate(t, strings.Join(tried, "; "))
	}
	script := "#!/bin/sh\nexec " + shellQuote(unshare) + " " + strings.Join(how, " ") + " -- " + shellQuote(binary) + " \"$@\"\n"
	p := filepath.Join(realTempDir(t), "claude-no-network")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatalf("claudetest: write the no-network wrapper: %v", err)
	}
	return p
}

func cannotIsolate(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("claudetest: cannot run the CLI without a network (%s=1 forbids skipping): %s", EnvRequire, why)
	}
	t.Skipf("claudetest: cannot run the CLI without a network (needs unshare and user or network namespaces): %s", why)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

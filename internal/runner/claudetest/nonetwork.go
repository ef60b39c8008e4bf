package claudetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

// EnvInNetns is set (by scripts/test.sh, and by LoopbackOnly for the run
// it starts) when the tests run in a network namespace of their own.
const EnvInNetns = "UNTETHER_IN_NETNS"

// LoopbackOnly makes sure the calling test runs where nothing but loopback
// is reachable, for a test of a CLI mode that reaches past the offline env
// (the interactive interface clones its plugin marketplace from GitHub and
// looks up hosts, verified with 2.1.328). Inside such a namespace (as
// scripts/test.sh runs the suite) it brings loopback up and returns true.
// Otherwise it runs this test again in a new one (`unshare -n` as root,
// `unshare -rn` otherwise), with loopback only, reports that run's output
// and result as the test's, and returns false: the caller returns at once.
// A top-level test only. Without namespaces the test is skipped, or fails
// under $UNTETHER_REQUIRE_REAL_CLAUDE=1, like NoNetwork's.
func LoopbackOnly(t *testing.T) bool {
	t.Helper()
	if os.Getenv(EnvInNetns) != "" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("claudetest: bring loopback up in the network namespace: %v", err)
		}
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		cannotIsolate(t, err.Error())
	}
	var tried []string
	for _, how := range [][]string{{"-n"}, {"-r", "-n"}} {
		if out, err := exec.Command(unshare, append(how, "--", "true")...).CombinedOutput(); err != nil {
			tried = append(tried, "unshare "+strings.Join(how, " ")+": "+strings.TrimSpace(string(out)))
			continue
		}
		args := append(how, "--", os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v", "-test.timeout=10m")
		cmd := exec.Command(unshare, args...)
		cmd.Env = append(os.Environ(), EnvInNetns+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("claudetest: ran %s in a loopback-only network namespace (unshare %s):\n%s", t.Name(), strings.Join(how, " "), out)
		if err != nil {
			t.Fatalf("claudetest: %s failed in its network namespace: %v", t.Name(), err)
		}
		if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
			t.Fatalf("claudetest: %s did not pass in its network namespace", t.Name())
		}
		return false
	}
	cannotIsolate(t, strings.Join(tried, "; "))
	return false
}

// loopbackUp sets the loopback interface up, as `ip link set lo up` does.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open a socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

// A child of the daemon (here the `claude --version` probe it runs at
// start, in production Claude's Bash tool) must not read the daemon's
// environment, where the bot token is.
//
// Measured on this machine: a process with CAP_SYS_PTRACE (root) reads
// /proc/<pid>/environ of any process, dumpable or not, so PR_SET_DUMPABLE
// protects a daemon that runs as a user, not one that runs as root. When
// the test runs as root, the daemon therefore runs as nobody, which is the
// case the prctl is for.
func TestDaemonEnvironIsHiddenFromItsChildren(t *testing.T) {
	uid, gid := os.Getuid(), os.Getgid()
	var cred *syscall.Credential
	if uid == 0 {
		uid, gid = 65534, 65534
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Everything the daemon needs, reachable by uid.
	dir, err := os.MkdirTemp("", "untether-dumpable-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "untether")
	copyFile(t, binary, bin, 0o755)
	d := newDaemon(t)
	d.home = filepath.Join(dir, "home")
	d.cfgPath = filepath.Join(dir, "untether.toml")
	d.cfg.StateDir = filepath.Join(dir, "state")
	d.cfg.Workdir = filepath.Join(dir, "project")
	cwd := filepath.Join(dir, "cwd")
	for _, p := range []string{d.home, d.cfg.StateDir, d.cfg.Workdir, cwd} {
		require.NoError(t, os.Mkdir(p, 0o700))
		require.NoError(t, os.Chown(p, uid, gid))
	}
	// The probe tries the daemon's environ, and, as a control, that of a
	// dumpable sibling of the same uid.
	result := filepath.Join(d.home, "result")
	d.cfg.Binary = filepath.Join(dir, "claude")
	script := `#!/bin/sh
if cat /proc/$PPID/environ >/dev/null 2>&1; then p=readable; else p=denied; fi
sleep 30 & s=$!
if cat /proc/$s/environ >/dev/null 2>&1; then c=readable; else c=denied; fi
kill $s
echo "parent=$p sibling=$c" > ` + result + `
echo '` + runner.TestedVersion + ` (Claude Code)'
`
	require.NoError(t, os.WriteFile(d.cfg.Binary, []byte(script), 0o755))
	d.writeConfig()
	require.NoError(t, os.Chown(d.cfgPath, uid, gid))

	cmd := exec.Command(bin, "run", "--config", d.cfgPath)
	cmd.Dir = cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	p := startCommand(t, cmd, baseEnv(d.home, "UNTETHER_TELEGRAM_BOT_TOKEN="+d.tg.Token()))
	// "claude version" is logged after the probe returned.
	p.waitLog("the version probe", msgIs("claude version"))
	got, err := os.ReadFile(result)
	require.NoError(t, err)
	assert.Equal(t, "parent=denied sibling=readable\n", string(got))
	if cred != nil {
		// Not dumpable: the kernel makes its /proc files root's.
		st, err := os.Stat("/proc/" + strconv.Itoa(p.pid()) + "/environ")
		require.NoError(t, err)
		assert.Equal(t, uint32(0), st.Sys().(*syscall.Stat_t).Uid)
	}
	p.signal(syscall.SIGTERM)
	assert.Equal(t, exitOK, p.waitExit())
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/tgfake"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// escapeCommand starts a process in a session of its own (setsid), tied to
// nothing of the Bash tool's, and records its pid in the workdir: what an
// ssh-agent or a dev server started from a tool looks like.
const escapeCommand = `setsid sh -c 'echo $$ > escaped.pid; exec tail -f /dev/null' </dev/null >/dev/null 2>&1 &`

// escapeTurn: "ESCAPE" makes Claude run escapeCommand, then say "Started it.".
func escapeTurn() []fakeapi.Rule {
	return fakeapi.ToolTurn("ESCAPE", "Bash", map[string]any{"command": escapeCommand, "description": "Start a server"}, "Started it.")
}

// TestSIGKILLLeavesNothingBehind: a SIGKILLed daemon (OOM killer, kill -9)
// takes its CLIs with it at once (parent-death signal), and the next start
// kills what they left that the kernel does not: a tool that setsid'd away.
func TestSIGKILLLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	p := d.start()
	d.waitReady(p)

	chat := tgfake.ChatID(alice)
	in := d.say(alice, "ESCAPE please")
	ap := d.waitBot(chat, "approval", func(m tgfake.Message) bool { return buttonData(m, "Approve") != "" })
	d.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	d.waitBot(chat, "final answer", func(m tgfake.Message) bool {
		return isFinal(m, in.ID) && strings.Contains(m.Text, "Started it.")
	})
	var escaped int
	require.Eventually(t, func() bool { // the tool wrote it in the background
		raw, _ := os.ReadFile(filepath.Join(claude.Workdir, "escaped.pid"))
		escaped, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		return escaped > 0
	}, wait, 10*time.Millisecond)
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) }) // should the test fail
	require.True(t, running(escaped), "the escaped tool runs")

	// Mid-turn.
	d.say(alice, "HANGFOREVER please")
	waitModelCall(t, claude, "HANGFOREVER")
	require.NotEmpty(t, cliProcesses(t, claude))
	p.signal(syscall.SIGKILL)
	killed := time.Now()
	require.Equal(t, 128+int(syscall.SIGKILL), p.waitExit())
	for len(cliProcesses(t, claude)) > 0 && time.Since(killed) < wait {
		time.Sleep(5 * time.Millisecond)
	}
	gone := time.Since(killed)
	t.Logf("every CLI was gone %v after the daemon's SIGKILL", gone.Round(time.Millisecond))
	require.Empty(t, cliProcesses(t, claude))
	assert.Less(t, gone, time.Second, "the CLIs die with the daemon")
	assert.True(t, running(escaped), "outside the CLI's group, the kernel leaves it running")

	// The next start kills it: it carries the tag of a recorded CLI.
	p = d.start()
	l := p.waitLog("the clean-up", msgIs("cleaned up after the previous run"))
	assert.Equal(t, int64(1), l.num("recorded"))
	assert.Equal(t, int64(1), l.num("killed"), "the escaped tool (its CLI is already dead)")
	assert.False(t, running(escaped), "the escaped tool is gone")
	d.waitReady(p)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

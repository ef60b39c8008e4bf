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

	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// escapeCommand starts a process in a session of its own (setsid), tied to
// nothing of the Bash tool's, and records its pid in the workdir: what an
// ssh-agent or a dev server started from a tool looks like.
const escapeCommand = `setsid sh -c 'echo $$ > escaped.pid; exec tail -f /dev/null' </dev/null >/dev/null 2>&1 &`

// escapeTurn: "ESCAPE" makes Claude run escapeCommand, then say "Started it.".
func escapeTurn() []fakeapi.Rule {
	return fakeapi.ToolTurn("ESCAPE", "Bash", map[string]any{"command": escapeCommand, "description": "Start a server"}, "Started it.")
}

// toolCommand is a tool's command that runs until killed, in the
// foreground of the Bash tool's shell (so inside the CLI's process group),
// and records its pid in the workdir.
const toolCommand = `sh -c 'echo $$ > tool.pid; exec sleep 300'`

// sleepTurn: "SLEEPTOOL" makes Claude run toolCommand, which never ends.
func sleepTurn() []fakeapi.Rule {
	return fakeapi.ToolTurn("SLEEPTOOL", "Bash", map[string]any{"command": toolCommand, "description": "Wait"}, "Done waiting.")
}

// TestSIGKILLLeavesNothingBehind: a SIGKILLed daemon (OOM killer, kill -9)
// takes its CLIs with it at once (parent-death signal). What the
// parent-death signal does not reach lives on until the next start, which
// kills it: a tool that setsid'd away, and a tool's command that was still
// running when its CLI died (it is the CLI's child, not the daemon's). A CLI
// the kernel is still tearing down at the next start is not counted: it is
// already dying.
func TestSIGKILLLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	require.NoError(t, claude.API.SetScript(fakeapi.Script{Rules: append(sleepTurn(), script().Rules...)}))
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	in := d.say(alice, "ESCAPE please")
	ap := d.waitBot(chat, "approval", func(m telegramtest.Message) bool { return buttonData(m, "Approve") != "" })
	d.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	d.waitBot(chat, "final answer", func(m telegramtest.Message) bool {
		return isFinal(m, in.ID) && strings.Contains(m.Text, "Started it.")
	})
	escaped := waitPIDFile(t, filepath.Join(claude.Workdir, "escaped.pid")) // the tool wrote it in the background
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })        // should the test fail
	require.True(t, running(escaped), "the escaped tool runs")

	// Mid-turn, with a tool's command running.
	in = d.say(alice, "SLEEPTOOL please")
	ap = d.waitBot(chat, "approval", func(m telegramtest.Message) bool {
		return m.ID != ap.ID && buttonData(m, "Approve") != ""
	})
	d.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	tool := waitPIDFile(t, filepath.Join(claude.Workdir, "tool.pid"))
	t.Cleanup(func() { _ = syscall.Kill(tool, syscall.SIGKILL) })
	require.NotEmpty(t, cliProcesses(t, claude))
	tag := procTag(t, escaped)
	require.NotEmpty(t, tag, "the tools carry their CLI's tag")

	p.signal(syscall.SIGKILL)
	killed := time.Now()
	require.Equal(t, 128+int(syscall.SIGKILL), p.waitExit())
	for len(cliProcesses(t, claude)) > 0 && time.Since(killed) < wait {
		time.Sleep(5 * time.Millisecond)
	}
	gone := time.Since(killed)
	t.Logf("every CLI was dying or gone %v after the daemon's SIGKILL", gone.Round(time.Millisecond))
	require.Empty(t, cliProcesses(t, claude))
	assert.Less(t, gone, time.Second, "the CLIs die with the daemon")
	assert.True(t, running(escaped), "outside the CLI's group, the kernel leaves it running")
	assert.True(t, running(tool), "the parent-death signal reached the CLI, not its tool's command")

	// What lives on is exactly what carries the tag and is not dying.
	left := taggedLive(t, tag)
	assert.Contains(t, left, escaped)
	assert.Contains(t, left, tool)

	// The next start kills all of it, and nothing else.
	p = d.start()
	l := p.waitLog("the clean-up", msgIs("cleaned up after the previous run"))
	assert.Equal(t, int64(1), l.num("recorded"))
	assert.ElementsMatch(t, left, l.ints("pids"), "the escaped tool and the tool's command (its shell too, if it forked)")
	assert.Contains(t, l.strs("processes"), "tail")
	assert.Contains(t, l.strs("processes"), "sleep")
	assert.False(t, running(escaped), "the escaped tool is gone")
	assert.False(t, running(tool), "the tool's command is gone")
	d.waitReady(p)
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

// waitPIDFile waits for a tool to write its pid to path.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		raw, _ := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		return pid > 0
	}, wait, 10*time.Millisecond, "a tool writes %s", path)
	return pid
}

// procTag is the CLI tag (UNTETHER_PROC) process pid inherited.
func procTag(t *testing.T, pid int) string {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	require.NoError(t, err)
	for _, kv := range strings.Split(string(raw), "\x00") {
		if v, ok := strings.CutPrefix(kv, "UNTETHER_PROC="); ok {
			return v
		}
	}
	return ""
}

// taggedLive lists the processes that carry tag and are neither zombies
// nor already exiting (PF_EXITING in field 9 of /proc/<pid>/stat).
func taggedLive(t *testing.T, tag string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !running(pid) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if flags, err := strconv.ParseUint(fields[6], 10, 64); err != nil || flags&0x4 != 0 {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && strings.Contains("\x00"+string(raw), "\x00UNTETHER_PROC="+tag+"\x00") {
			out = append(out, pid)
		}
	}
	return out
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

package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const outsideID = SessionID("5f0c6a2e-8d1b-4c3a-9e7f-0123456789ab")

func TestSessionFlag(t *testing.T) {
	id := string(outsideID)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--resume", id}, HowResume},
		{[]string{"--resume=" + id}, HowResume},
		{[]string{"-r", id}, HowResume},
		{[]string{"-r" + id}, HowResume},
		{[]string{"--resume", strings.ToUpper(id)}, HowResume},
		{[]string{"-p", "--output-format", "stream-json", "--resume", id, "--verbose"}, HowResume},
		{[]string{"--session-id", id}, HowSessionID},
		{[]string{"--session-id=" + id}, HowSessionID},
		{[]string{"--continue"}, HowContinue},
		{[]string{"-c", "-p", "hi"}, HowContinue},
		{[]string{"--resume", id, "--continue"}, HowResume},
		{nil, ""},
		{[]string{"--resume"}, ""},
		{[]string{"--resume", "--verbose", id}, ""},
		{[]string{"--resume", "6f0c6a2e-8d1b-4c3a-9e7f-0123456789ab"}, ""},
		{[]string{"--resume", id, "--fork-session"}, ""},
		{[]string{"--continue", "--fork-session"}, ""},
		{[]string{"--", "--resume", id}, ""},
		{[]string{"-p", "--", "-c"}, ""},
		{[]string{"-r=" + id}, ""},
		{[]string{"--resume-x", id}, ""},
		{[]string{"-p", id}, ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, sessionFlag(tc.args, outsideID), "%q", tc.args)
	}
}

func TestClaudeArgs(t *testing.T) {
	cases := []struct {
		argv []string
		want []string // nil: not the CLI
	}{
		{[]string{"claude", "-r", "x"}, []string{"-r", "x"}},
		{[]string{"/usr/local/bin/claude"}, []string{}},
		{[]string{"/opt/x/bin/claude.exe", "--resume", "x"}, []string{"--resume", "x"}},
		{[]string{"node", "--max-old-space-size=4096", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-c"}, []string{"-c"}},
		{[]string{"/usr/bin/node", "/usr/local/bin/claude", "-c"}, []string{"-c"}},
		{[]string{"/bin/sh", "/tmp/x/claude", "-c"}, []string{"-c"}},
		{[]string{"/home/a/.local/share/claude/versions/2.1.328", "-c"}, []string{"-c"}},
		{[]string{"claude-beta", "-c"}, []string{"-c"}},
		{[]string{"node", "/srv/app/cli.js", "-c"}, nil},
		{[]string{"node"}, nil},
		{[]string{"node", "--inspect"}, nil},
		{[]string{"bash", "-c", "claude --resume x"}, nil},
		{[]string{"vim", "claude"}, nil},
		{[]string{"notclaude", "-c"}, nil},
		{[]string{""}, nil},
	}
	for _, tc := range cases {
		got, ok := claudeArgs(tc.argv, []string{"claude-beta"})
		assert.Equal(t, tc.want != nil, ok, "%q", tc.argv)
		if tc.want != nil {
			assert.Equal(t, tc.want, got, "%q", tc.argv)
		}
	}
}

func TestDescends(t *testing.T) {
	parent := map[int]int{10: 1, 11: 10, 12: 11, 20: 1, 30: 31, 31: 30}
	assert.True(t, descends(12, 10, parent))
	assert.True(t, descends(11, 10, parent))
	assert.False(t, descends(10, 10, parent), "a process is not its own descendant")
	assert.False(t, descends(20, 10, parent))
	assert.False(t, descends(99, 10, parent), "unknown")
	assert.False(t, descends(30, 10, parent), "a cycle (a race of reused pids) ends")
}

// fakeCLIs starts a script named claude that waits on its stdin, a pipe
// the test holds, so it ends with the test.
type fakeCLIs struct {
	t      *testing.T
	script string
}

func newFakeCLIs(t *testing.T) *fakeCLIs {
	dir := t.TempDir()
	script := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nread line\n"), 0o755))
	return &fakeCLIs{t: t, script: script}
}

// start runs the script with args in dir (its own child) and returns it.
func (f *fakeCLIs) start(dir string, env []string, args ...string) *exec.Cmd {
	return f.startVia(dir, env, f.script, args...)
}

// startVia runs name with args in dir, its stdin a pipe the test holds
// until it ends, and env added to its environment.
func (f *fakeCLIs) startVia(dir string, env []string, name string, args ...string) *exec.Cmd {
	f.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	require.NoError(f.t, err)
	require.NoError(f.t, cmd.Start())
	f.t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	return cmd
}

// waitRunning waits until each pid runs the script (the kernel has exec'd
// it through its interpreter; a shell's child forked to run it first
// shows the shell's own command line, with the script's path in it).
func (f *fakeCLIs) waitRunning(pids ...int) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		for _, pid := range pids {
			argv, err := readCmdline(pid)
			if err != nil || len(argv) < 2 || argv[1] != f.script {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
}

// TestFindOutside runs claude-named scripts in every way a command line may
// name the session, or not, and finds exactly the outside ones: not those
// a stand-in daemon started, nor a pid the caller excludes, nor one with
// the tree tag.
func TestFindOutside(t *testing.T) {
	f := newFakeCLIs(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	elsewhere := t.TempDir()
	id := string(outsideID)

	// The stand-in daemon: a shell that starts a claude of its own (on the
	// shell's stdin: an asynchronous command's is /dev/null otherwise).
	daemon := f.startVia(elsewhere, nil, "sh", "-c", `exec 3<&0; "$0" --resume "$1" <&3 3<&- & wait`, f.script, id)
	resume := f.start(elsewhere, nil, "--resume", id)
	short := f.start(elsewhere, nil, "-r", id)
	sessionID := f.start(elsewhere, nil, "-p", "--session-id="+id)
	cont := f.start(dir, nil, "--continue")
	others := []*exec.Cmd{
		f.start(elsewhere, nil, "--continue"),                     // another directory's latest
		f.start(elsewhere, nil, "--resume", id, "--fork-session"), // writes a new session
		f.start(elsewhere, nil, "--resume", "6f0c6a2e-8d1b-4c3a-9e7f-0123456789ab"),
		f.start(elsewhere, nil, "--", "--resume", id),
	}
	tagged := f.start(elsewhere, []string{procTagEnv + "=abc"}, "--resume="+id) // an untether's CLI
	excluded := f.start(elsewhere, nil, "--resume", id)
	// A zombie: it read end-of-input and exited, and nobody has waited for
	// it yet. Its command line reads empty.
	zombie := exec.Command(f.script, "--resume", id)
	zombie.Stdin = strings.NewReader("")
	require.NoError(t, zombie.Start())
	t.Cleanup(func() { _ = zombie.Wait() })
	require.Eventually(t, func() bool {
		st, err := readProcStat(zombie.Process.Pid)
		return err == nil && st.dead()
	}, 10*time.Second, 5*time.Millisecond)
	f.waitRunning(resume.Process.Pid, short.Process.Pid, sessionID.Process.Pid, cont.Process.Pid, excluded.Process.Pid, tagged.Process.Pid)
	for _, o := range others {
		f.waitRunning(o.Process.Pid)
	}
	var daemonsCLI int
	require.Eventually(t, func() bool {
		procs, err := listProcs()
		require.NoError(t, err)
		for _, p := range procs {
			if p.PPID == daemon.Process.Pid && !p.dead() {
				daemonsCLI = p.PID
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	f.waitRunning(daemonsCLI)

	found, err := FindOutside(OutsideQuery{ID: outsideID, Dir: dir, Daemon: daemon.Process.Pid, Exclude: map[int]bool{excluded.Process.Pid: true}})
	require.NoError(t, err)
	got := map[int]string{}
	for _, c := range found {
		got[c.PID] = c.How
		assert.Equal(t, []string{"/bin/sh", f.script}, c.Argv[:2], "the kernel runs a script through its interpreter")
		st, err := readProcStat(c.PID)
		require.NoError(t, err)
		assert.Equal(t, st.StartTime, c.StartTime)
	}
	assert.Equal(t, map[int]string{
		resume.Process.Pid: HowResume, short.Process.Pid: HowResume,
		sessionID.Process.Pid: HowSessionID, cont.Process.Pid: HowContinue,
	}, got)
	for _, c := range found {
		if c.PID == cont.Process.Pid {
			assert.Equal(t, dir, c.Cwd)
		}
	}

	// What kept the others out: the tag, the stand-in's tree, the pid.
	assert.Equal(t, "abc", procTag(tagged.Process.Pid))
	found, err = FindOutside(OutsideQuery{ID: outsideID, Dir: dir, Daemon: resume.Process.Pid})
	require.NoError(t, err)
	got = map[int]string{}
	for _, c := range found {
		got[c.PID] = c.How
	}
	assert.Equal(t, HowResume, got[daemonsCLI], "another daemon: the stand-in's claude is outside")
	assert.Equal(t, HowResume, got[excluded.Process.Pid], "not excluded: found")
	assert.NotContains(t, got, zombie.Process.Pid)
	assert.NotContains(t, got, tagged.Process.Pid)

	// By default untether is this process: all of the above are its children.
	found, err = FindOutside(OutsideQuery{ID: outsideID, Dir: dir})
	require.NoError(t, err)
	assert.Empty(t, found)

	_, err = FindOutside(OutsideQuery{ID: "not-a-uuid"})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// BenchmarkFindOutside is the cost of one scan, which untether pays before
// a turn from the phone: every process's stat, and the command line of
// each (more for claude ones).
func BenchmarkFindOutside(b *testing.B) {
	q := OutsideQuery{ID: outsideID, Dir: b.TempDir()}
	for b.Loop() {
		if _, err := FindOutside(q); err != nil {
			b.Fatal(err)
		}
	}
	procs, err := listProcs()
	require.NoError(b, err)
	b.ReportMetric(float64(len(procs)), "procs")
}

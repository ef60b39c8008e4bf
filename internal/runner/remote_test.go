package runner

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/sshtest"
)

func TestRemoteEnv(t *testing.T) {
	pre, err := remoteEnv([]string{"PATH=/local/bin", "HOME=/home/local", "LANG=de_DE.UTF-8", "LC_ALL=C", "SECRET=x"},
		map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "HOME": "/remote/home", "WITH_EQ": "a=b c"})
	require.NoError(t, err)
	assert.Equal(t, "ANTHROPIC_BASE_URL=http://127.0.0.1:1\nHOME=/remote/home\nLANG=de_DE.UTF-8\nLC_ALL=C\nWITH_EQ=a=b c\n\n", string(pre),
		"the configured env and the locale, never this machine's PATH or other variables")

	_, err = remoteEnv(nil, map[string]string{"X": "two\nlines"})
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = remoteEnv(nil, map[string]string{"-p": "x"})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

func TestSSHArgs(t *testing.T) {
	r := Remote{Host: "dev@build01", SSHOptions: []string{"-p", "2222"}}
	assert.Equal(t, []string{"-T", "-o", "BatchMode=yes", "-p", "2222", "dev@build01", "--", "cmd"}, r.SSHArgs("cmd"))
	env := sshEnv([]string{"PATH=/bin", "HOME=/h", "SSH_AUTH_SOCK=/tmp/agent", "UNTETHER_TELEGRAM_BOT_TOKEN=x"})
	assert.Equal(t, []string{"HOME=/h", "PATH=/bin", "SSH_AUTH_SOCK=/tmp/agent"}, env)
}

// wrapperRun runs the wrapper the way the remote login shell does (sh -c
// with the command line ssh sends, and remoteInput first on stdin),
// without ssh, so its own behaviour is measured: the CLI is a stand-in
// script.
type wrapperRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	exited chan struct{}
	stderr *tailBuffer
}

func startWrapper(t *testing.T, dir, cli string, env map[string]string) *wrapperRun {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command("sh", "-c", remoteCommand(remoteWrapper))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as sshd starts it
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	w := &wrapperRun{cmd: cmd, stdin: stdin, lines: make(chan string, 100), exited: make(chan struct{}), stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = w.stderr
	require.NoError(t, startOwned(cmd)) // else a parallel test's orphan reaper can steal its exit status
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-w.exited
	})
	pre, err := remoteEnv(nil, env)
	require.NoError(t, err)
	pre, err = remoteInput(pre, dir, "sh", "-c", cli)
	require.NoError(t, err)
	_, err = stdin.Write(pre)
	require.NoError(t, err)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
		_ = waitOwned(cmd)
		close(w.exited)
	}()
	return w
}

func (w *wrapperRun) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-w.lines:
		require.True(t, ok, "the wrapper's output ended; stderr: %s", w.stderr.String())
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no line from the wrapper")
	}
	return ""
}

// cliPID is the stand-in CLI's pid, which it prints first.
func (w *wrapperRun) cliPID(t *testing.T) int {
	t.Helper()
	pid, err := strconv.Atoi(w.line(t))
	require.NoError(t, err)
	return pid
}

// waitGoneWithin reports how long pid took to disappear.
func waitPIDGone(t *testing.T, pid int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for syscall.Kill(pid, 0) == nil {
		if st, err := readProcStat(pid); err == nil && st.dead() {
			break // a zombie its parent has not reaped yet: it is gone
		}
		if time.Since(start) > limit {
			t.Fatalf("process %d still alive after %s", pid, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func TestRemoteWrapper(t *testing.T) {
	t.Run("environment, directory and a relayed stdin; end of input ends the CLI", func(t *testing.T) {
		dir := t.TempDir()
		w := startWrapper(t, dir, `echo $$; echo "$GREETING from $(pwd)"; while IFS= read -r l; do echo "got $l"; done; echo bye`,
			map[string]string{"GREETING": "hello 'quoted' $world"})
		w.cliPID(t)
		real, _ := filepath.EvalSymlinks(dir)
		assert.Equal(t, "hello 'quoted' $world from "+real, w.line(t))
		_, err := io.WriteString(w.stdin, `{"type":"user"}`+"\n")
		require.NoError(t, err)
		assert.Equal(t, `got {"type":"user"}`, w.line(t))
		require.NoError(t, w.stdin.Close())
		assert.Equal(t, "bye", w.line(t))
		<-w.exited
		assert.Equal(t, 0, w.cmd.ProcessState.ExitCode())
	})
	t.Run("~/ is the login's home", func(t *testing.T) {
		w := startWrapper(t, "~/", `echo $$; pwd`, nil)
		w.cliPID(t)
		assert.Equal(t, w.cmd.Env[1][len("HOME="):], w.line(t))
	})
	t.Run("a CLI that ignores the end of its input is stopped", func(t *testing.T) {
		w := startWrapper(t, t.TempDir(), `echo $$; exec sleep 1000`, nil)
		pid := w.cliPID(t)
		require.NoError(t, w.stdin.Close())
		took := waitPIDGone(t, pid, 20*time.Second)
		t.Logf("measured: the CLI was gone %s after its channel's input ended (SIGTERM after %ss)", took.Round(10*time.Millisecond), remoteGrace)
		<-w.exited
	})
	t.Run("a CLI that ignores SIGTERM is killed", func(t *testing.T) {
		w := startWrapper(t, t.TempDir(), `trap '' TERM; echo $$; while :; do sleep 1; done`, nil)
		pid := w.cliPID(t)
		require.NoError(t, w.stdin.Close())
		took := waitPIDGone(t, pid, 30*time.Second)
		t.Logf("measured: a CLI ignoring SIGTERM was gone %s after its input ended", took.Round(10*time.Millisecond))
		assert.Greater(t, took, 2*time.Second, "it got the grace periods")
	})
	t.Run("a missing directory is reported", func(t *testing.T) {
		w := startWrapper(t, "/nonexistent/untether-project", `echo $$`, nil)
		<-w.exited
		assert.Equal(t, 96, w.cmd.ProcessState.ExitCode())
		assert.Contains(t, w.stderr.String(), "cannot enter the directory /nonexistent/untether-project")
	})
}

func TestRemoteVersion(t *testing.T) {
	srv := sshtest.Start(t)
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755))
	r := Remote{Host: srv.Host, SSHOptions: srv.Options}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	v, err := RemoteVersion(ctx, r, dir, bin)
	require.NoError(t, err)
	assert.Equal(t, "2.1.330", v)

	_, err = RemoteVersion(ctx, r, filepath.Join(dir, "missing"), bin)
	assert.ErrorIs(t, err, ErrWorkdirMissing)
	_, err = RemoteVersion(ctx, r, dir, "/nonexistent/claude")
	assert.ErrorIs(t, err, ErrBinaryMissing)
	_, err = RemoteVersion(ctx, Remote{Host: "nobody@127.0.0.1", SSHOptions: append(slices.Clone(srv.Options), "-o", "ConnectTimeout=5")}, dir, bin)
	assert.ErrorIs(t, err, ErrRemoteUnreachable, "a user the server does not accept")

	// A login shell that reads command lines as fish does, and a directory
	// no quoting survives there: the check's command line is a constant too.
	fish := sshtest.Start(t, sshtest.FishLike())
	odd := filepath.Join(t.TempDir(), `it\'s a dir;#`)
	require.NoError(t, os.Mkdir(odd, 0o755))
	v, err = RemoteVersion(ctx, Remote{Host: fish.Host, SSHOptions: fish.Options}, odd, bin)
	require.NoError(t, err)
	assert.Equal(t, "2.1.330", v)
	_, err = RemoteVersion(ctx, Remote{Host: fish.Host, SSHOptions: fish.Options}, filepath.Join(odd, "missing"), bin)
	assert.ErrorIs(t, err, ErrWorkdirMissing)
}

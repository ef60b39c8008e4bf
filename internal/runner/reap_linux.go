package runner

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// subreaper records whether this process became a child subreaper, so
// processes that outlive their parent in a CLI's tree are reparented to us
// (and must be reaped here) instead of to init.
var subreaper atomic.Bool

var reaperOnce sync.Once

// EnableSubreaper makes the daemon a child subreaper (Linux), so MCP servers
// and tool processes that escape the CLI become our children instead of
// init's, where the session's end can kill them. It also starts the orphan
// reaper, which reaps those adopted children whenever one exits, so none is
// left a zombie. It lives as long as the process.
func EnableSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	subreaper.Store(true)
	reaperOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		go func() {
			for range ch {
				reapOrphans()
			}
		}()
	})
	return nil
}

// owned are the pids of CLI children an exec.Cmd of ours will Wait for.
// The orphan reaper leaves them alone: reaping one would steal the exit
// status from its Wait. CLIs (in process groups of their own) go through
// startOwned; other children stay in the daemon's group, which the reaper
// never touches.
var owned = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startOwned starts cmd (on the spawn thread, see spawn_linux.go) and
// registers it before the reaper can see it exit.
func startOwned(cmd *exec.Cmd) error {
	owned.Lock()
	defer owned.Unlock()
	if err := startOnSpawnThread(cmd); err != nil {
		return err
	}
	owned.pids[cmd.Process.Pid] = true
	return nil
}

// waitOwned waits for a child started by startOwned.
func waitOwned(cmd *exec.Cmd) error {
	err := cmd.Wait()
	owned.Lock()
	delete(owned.pids, cmd.Process.Pid)
	owned.Unlock()
	return err
}

// reapOrphans reaps every zombie child of ours that no exec.Cmd waits for:
// processes the subreaper adopted from a CLI's tree. It returns how many.
func reapOrphans() int {
	if !subreaper.Load() {
		return 0
	}
	owned.Lock()
	defer owned.Unlock()
	procs, err := listProcs()
	if err != nil {
		return 0
	}
	self, group, n := os.Getpid(), syscall.Getpgrp(), 0
	for _, p := range procs {
		if p.PPID != self || !p.dead() || owned.pids[p.PID] {
			continue
		}
		// A child in our own process group was started by plain exec.Command
		// (git, ffmpeg, the voice command, claude --version) and its Wait is
		// about to reap it: stealing it would fail that Wait with ECHILD.
		// Adopted orphans come from CLI trees, which run in groups of their
		// own (the CLI's, or one they made).
		if p.PGID == group {
			continue
		}
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(p.PID, &ws, unix.WNOHANG, nil); err == nil && pid == p.PID {
			n++
		}
	}
	return n
}

// killGroup SIGKILLs a CLI's process group. It only signals: the CLI is
// reaped by its Wait, the rest by killTree and the orphan reaper.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.ESRCH
	}
	return syscall.Kill(-pgid, sig)
}

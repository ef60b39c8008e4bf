package runner

import (
	"errors"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// subreaper records whether this process became a child subreaper, so group
// members that outlive the CLI are reparented to us and must be reaped here.
var subreaper atomic.Bool

// EnableSubreaper makes the daemon a child subreaper (Linux), so MCP servers
// and tool processes that escape the CLI become our children instead of
// init's, and killGroup can reap them rather than leave them running.
func EnableSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	subreaper.Store(true)
	return nil
}

// killGroup SIGKILLs what is left of a process group and, as a subreaper,
// reaps those members. It is called after the leader was reaped by
// cmd.Wait, so waiting on -pgid never steals another child's status.
func killGroup(pgid int) {
	if pgid <= 1 {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if !subreaper.Load() {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-pgid, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.ECHILD) {
			// None is our child right now; done once the group is empty
			// (members dying in a chain may be reparented to us later).
			if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
				return
			}
		}
		if err == nil && pid > 0 {
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.ESRCH
	}
	return syscall.Kill(-pgid, sig)
}

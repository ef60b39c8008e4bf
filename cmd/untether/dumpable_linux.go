package main

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// setUndumpable makes the daemon's memory and /proc files (environ, mem,
// ptrace) unreachable for processes of the same uid without
// CAP_SYS_PTRACE: Claude's tools run as our uid and must not read the bot
// token from /proc/<pid>/environ. Children regain their own dumpable flag
// at exec, so the CLI is unaffected. Root processes (CAP_SYS_PTRACE) can
// still read it; that is why the system unit runs as a dedicated user.
func setUndumpable(stderr io.Writer) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "untether: warning: prctl(PR_SET_DUMPABLE, 0): %v; same-uid processes can read this process's environment\n", err)
	}
}

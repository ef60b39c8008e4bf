package runner

import "fmt"

// ProcRecord identifies one CLI process across daemon restarts: its pid
// and start time (field 22 of /proc/<pid>/stat), which together never name
// another process, and the tag its tools inherit.
type ProcRecord struct {
	PID       int
	StartTime uint64
	Tag       string
}

// ProcessTracker is told about every CLI process a session starts and
// reaps, so a daemon can persist them and kill what a killed predecessor
// left behind (KillLeftovers). Calls come from the spawning and the
// supervising goroutines; they should be quick.
type ProcessTracker interface {
	ProcessStarted(ProcRecord)
	ProcessExited(ProcRecord)
}

// KillLeftovers kills what a previous instance of the daemon left running,
// from the records it kept: each recorded CLI still running under the same
// pid and start time, with its process group, and every process carrying a
// recorded tag (the tools that left the group), with their descendants. A
// pid reused by another process is never touched, nor is a process already
// exiting (a CLI the parent-death signal reached, whose memory the kernel
// is still freeing). It returns the processes it killed; call it at start,
// before any session spawns.
func KillLeftovers(records []ProcRecord) ([]Leftover, error) {
	pgids, tags := map[int]bool{}, map[string]bool{}
	for _, r := range records {
		if st, err := readProcStat(r.PID); err == nil && st.StartTime == r.StartTime && !st.dead() && st.PID > 1 {
			// The CLI's own group: it is still the leader, so the pgid is its.
			pgids[r.PID] = true
		}
		if r.Tag != "" {
			tags[r.Tag] = true
		}
	}
	killed, err := killTrees(pgids, tags)
	out := make([]Leftover, len(killed))
	for i, p := range killed {
		out[i] = Leftover{PID: p.PID, Name: p.Comm}
	}
	if err != nil {
		return out, fmt.Errorf("kill leftover CLI processes: %w", err)
	}
	return out, nil
}

// Leftover is a process KillLeftovers killed.
type Leftover struct {
	PID  int
	Name string // the kernel's name for it (comm), e.g. "tail" or "claude"
}

package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// A CLI's tools can leave its process group (setsid: ssh-agent, dev
// servers, `nohup setsid …`) and, once their parent exits, its process tree
// too. So every CLI is started with a unique tag in its environment, which
// its tools inherit, and when the CLI is gone its tree is found again by
// that tag: the tagged processes, the members of its process group, and all
// their descendants.

// procTagEnv names the environment variable carrying a CLI's tag.
const procTagEnv = "UNTETHER_PROC"

// procStat is the part of /proc/<pid>/stat supervision needs.
type procStat struct {
	PID, PPID, PGID int
	State           byte
	// Comm is the process's name (at most 15 bytes), for logs.
	Comm string
	// Flags is field 9, the kernel's PF_* flags: PF_EXITING marks a process
	// already on its way out (a SIGKILLed CLI whose memory the kernel is
	// still freeing), which needs no signal and is nobody's leftover.
	Flags uint64
	// StartTime is field 22, clock ticks after boot: with the pid it names
	// one process for good, so a reused pid is never mistaken for it.
	StartTime uint64
}

func (p procStat) dead() bool { return p.State == 'Z' || p.State == 'X' }

// pfExiting is the kernel's PF_EXITING (include/linux/sched.h): set when a
// process starts to exit, before its memory is released and long before
// its parent reaps it.
const pfExiting = 0x4

// exiting reports whether p is already dying: killed or exited, but not yet
// a zombie.
func (p procStat) exiting() bool { return p.Flags&pfExiting != 0 }

// ProcStartTime returns the start time of process pid as /proc reports it
// (field 22 of /proc/<pid>/stat).
func ProcStartTime(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	return st.StartTime, nil
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, fmt.Errorf("read process %d stat: %w", pid, err)
	}
	return parseProcStat(b)
}

var errBadStat = errors.New("malformed /proc stat")

// parseProcStat parses "pid (comm) state ppid pgrp … starttime …"; comm
// may hold spaces and parentheses, so fields count from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return procStat{}, fmt.Errorf("%w: %.40q", errBadStat, b)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("%w: pid: %v", errBadStat, err)
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("%w: %d fields after comm", errBadStat, len(f))
	}
	st := procStat{PID: pid, State: f[0][0], Comm: string(b[open+1 : end])}
	if st.PPID, err = strconv.Atoi(string(f[1])); err == nil {
		if st.PGID, err = strconv.Atoi(string(f[2])); err == nil {
			if st.Flags, err = strconv.ParseUint(string(f[6]), 10, 64); err == nil {
				st.StartTime, err = strconv.ParseUint(string(f[19]), 10, 64)
			}
		}
	}
	if err != nil {
		return procStat{}, fmt.Errorf("%w: %v", errBadStat, err)
	}
	return st, nil
}

// procList is what killTrees scans; a test can make it show a process as
// exiting.
var procList = listProcs

// listProcs returns every process /proc shows; ones that vanish while
// being read are skipped.
func listProcs() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	procs := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			procs = append(procs, st)
		}
	}
	return procs, nil
}

// procTag returns the value of procTagEnv in process pid's initial
// environment, or "". Processes of other users are unreadable.
func procTag(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	prefix := []byte(procTagEnv + "=")
	for len(b) > 0 {
		entry, rest, _ := bytes.Cut(b, []byte{0})
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			return string(v)
		}
		b = rest
	}
	return ""
}

// treeMembers returns the live processes that belong to CLI trees: those
// in one of the process groups pgids, those tagged with one of tags, and
// all their descendants. The caller is never included.
func treeMembers(procs []procStat, pgids map[int]bool, tags map[string]bool) []procStat {
	self := os.Getpid()
	children := make(map[int][]procStat, len(procs))
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p)
	}
	in := map[int]bool{}
	var out []procStat
	var add func(p procStat)
	add = func(p procStat) {
		if in[p.PID] || p.PID == self || p.PID <= 1 {
			return
		}
		in[p.PID] = true
		if !p.dead() {
			out = append(out, p)
		}
		for _, c := range children[p.PID] {
			add(c)
		}
	}
	for _, p := range procs {
		if p.dead() || p.PID == self {
			continue
		}
		if pgids[p.PGID] || (len(tags) > 0 && tags[procTag(p.PID)]) {
			add(p)
		}
	}
	return out
}

// killExact SIGKILLs p only if its pid still names the same process
// (same start time), through a pidfd so the pid cannot be reused between
// the check and the signal.
func killExact(p procStat) error {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if errors.Is(err, unix.ENOSYS) {
		// Kernels before 5.3: check, then kill; the window is tiny.
		if cur, err := readProcStat(p.PID); err != nil || cur.StartTime != p.StartTime {
			return unix.ESRCH
		}
		return unix.Kill(p.PID, unix.SIGKILL)
	}
	if err != nil {
		return fmt.Errorf("open pidfd %d: %w", p.PID, err)
	}
	defer unix.Close(fd)
	if cur, err := readProcStat(p.PID); err != nil || cur.StartTime != p.StartTime {
		return unix.ESRCH
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// sweepGrace bounds how long a sweep waits for what it killed to be gone.
const sweepGrace = 2 * time.Second

// killTree SIGKILLs every process of a CLI's tree: its process group
// pgid (0: none; only while the group is known to be the CLI's) and the
// processes tagged tag ("": none), with their descendants. It waits,
// reaping what the subreaper adopted, until they are all gone, and returns
// how many it killed.
func killTree(pgid int, tag string) (int, error) {
	killed, err := killTreesOf(pgid, tag)
	return len(killed), err
}

func killTreesOf(pgid int, tag string) ([]procStat, error) {
	pgids, tags := map[int]bool{}, map[string]bool{}
	if pgid > 1 {
		pgids[pgid] = true
	}
	if tag != "" {
		tags[tag] = true
	}
	return killTrees(pgids, tags)
}

// killTrees SIGKILLs the members of the trees pgids and tags name, waits
// until they are gone, and returns those it killed. Members already
// exiting get no signal and are not counted, but are waited for too.
func killTrees(pgids map[int]bool, tags map[string]bool) ([]procStat, error) {
	if len(pgids) == 0 && len(tags) == 0 {
		return nil, nil
	}
	killed, dying := map[int]procStat{}, map[int]procStat{}
	// Rounds, because a member may fork between the scan and its kill; a
	// process with SIGKILL pending forks no more, so this ends.
	for round := 0; round < 20; round++ {
		procs, err := procList()
		if err != nil {
			return sortedProcs(killed), err
		}
		fresh := 0
		for _, p := range treeMembers(procs, pgids, tags) {
			if k, ok := killed[p.PID]; ok && k.StartTime == p.StartTime {
				continue
			}
			if p.exiting() {
				dying[p.PID] = p
				continue
			}
			if err := killExact(p); err == nil {
				killed[p.PID] = p
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	out := sortedProcs(killed)
	for pid, p := range killed {
		dying[pid] = p
	}
	if !waitGone(dying, sweepGrace) {
		return out, fmt.Errorf("%d killed processes still there after %s", len(dying), sweepGrace)
	}
	return out, nil
}

// sortedProcs lists procs by pid, so logs and tests see a stable order.
func sortedProcs(procs map[int]procStat) []procStat {
	out := make([]procStat, 0, len(procs))
	for _, p := range procs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b procStat) int { return a.PID - b.PID })
	return out
}

// waitGone waits until none of procs is alive and none is left a zombie
// of ours, reaping our adopted ones on the way. It removes from procs
// those that are gone.
func waitGone(procs map[int]procStat, d time.Duration) bool {
	if len(procs) == 0 {
		return true
	}
	self := os.Getpid()
	victim := make(map[int]bool, len(procs))
	for pid := range procs {
		victim[pid] = true
	}
	deadline := time.Now().Add(d)
	for {
		reapOrphans()
		left := 0
		for pid, p := range procs {
			cur, err := readProcStat(pid)
			switch {
			case err != nil || cur.StartTime != p.StartTime:
				delete(procs, pid) // gone, reaped
			case cur.dead() && cur.PPID != self && !victim[cur.PPID]:
				delete(procs, pid) // a parent outside the tree reaps it
			default:
				left++
			}
		}
		if left == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

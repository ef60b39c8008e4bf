package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Before a turn from the phone, untether warns when a claude started
// outside it (a person's terminal) runs the same session on this machine:
// two CLIs appending to one transcript each keep their own history in
// memory, and neither sees the other's turns. Such a process is found by
// its command line in /proc, which every user may read: the session id
// after --resume, -r or --session-id, or --continue in the session's
// directory (the CLI then takes the latest conversation there, which may
// be this one). What is untether's is left out: its CLIs and their tools
// carry the tree tag (procTagEnv) in their environment and descend from the
// daemon, and the caller may name more pids.
//
// What cannot be seen: processes on another host (a remote project's CLI
// runs there), processes /proc hides (mounted with hidepid), and the
// environment and working directory of another user's processes (so such a
// process's --continue is not matched, and its tag not read: with the
// system unit, a person's own claude runs as another user than untether,
// and one carrying a tag would be another untether's).

// OutsideQuery says which session FindOutside looks for, and what is
// untether's own.
type OutsideQuery struct {
	ID SessionID
	// Dir is the session's working directory, where a claude --continue
	// may take it.
	Dir string
	// Names are program names recognised as the CLI besides claude,
	// claude.exe and a node or bun running claude-code's cli.js: e.g. the
	// configured binary's base name.
	Names []string
	// Exclude are pids untether knows as its own.
	Exclude map[int]bool
	// Daemon is the process whose descendants are untether's; 0 is this
	// process.
	Daemon int
}

// OutsideCLI is a claude process, not untether's, that runs the session.
type OutsideCLI struct {
	PID       int
	StartTime uint64
	// Argv is its command line.
	Argv []string
	// How is how it names the session: "--resume" (or -r), "--session-id",
	// or "--continue" (in Dir).
	How string
	// Cwd is its working directory, "" when /proc does not tell (another
	// user's process).
	Cwd string
}

// Ways an OutsideCLI names its session.
const (
	HowResume    = "--resume"
	HowSessionID = "--session-id"
	HowContinue  = "--continue"
)

// FindOutside lists, by pid, the claude processes not untether's that run
// q.ID on this machine. Processes that vanish, turn zombie, are reused or
// cannot be read while it looks are passed over; only an unreadable /proc
// is an error.
func FindOutside(q OutsideQuery) ([]OutsideCLI, error) {
	if !q.ID.Valid() {
		return nil, fmt.Errorf("%w: session id %.80q is not a UUID", ErrInvalidInput, q.ID)
	}
	procs, err := procList()
	if err != nil {
		return nil, fmt.Errorf("find claude processes outside untether: %w", err)
	}
	daemon := q.Daemon
	if daemon == 0 {
		daemon = os.Getpid()
	}
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.PID] = p.PPID
	}
	dir := q.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // /proc/<pid>/cwd is the physical directory
	}
	var out []OutsideCLI
	for _, p := range procs {
		if p.dead() || p.exiting() || q.Exclude[p.PID] || p.PID == daemon || descends(p.PID, daemon, parent) {
			continue
		}
		c, ok := outsideCLI(p, q, dir)
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// outsideCLI reads process p and returns it when it is a claude running
// q.ID (dir is q.Dir resolved) and carries no tree tag.
func outsideCLI(p procStat, q OutsideQuery, dir string) (OutsideCLI, bool) {
	argv, err := readCmdline(p.PID)
	if err != nil || len(argv) == 0 {
		return OutsideCLI{}, false // gone, a kernel thread, or a zombie
	}
	args, ok := claudeArgs(argv, q.Names)
	if !ok {
		return OutsideCLI{}, false
	}
	how := sessionFlag(args, q.ID)
	if how == "" {
		return OutsideCLI{}, false
	}
	cwd, _ := os.Readlink("/proc/" + strconv.Itoa(p.PID) + "/cwd")
	if how == HowContinue && (cwd == "" || cwd != dir) {
		return OutsideCLI{}, false
	}
	if procTag(p.PID) != "" {
		return OutsideCLI{}, false // an untether's CLI or one of its tools
	}
	// The pid may have been reused since the scan: what was read is of
	// the same process only if it started at the same time.
	if st, err := readProcStat(p.PID); err != nil || st.StartTime != p.StartTime {
		return OutsideCLI{}, false
	}
	return OutsideCLI{PID: p.PID, StartTime: p.StartTime, Argv: argv, How: how, Cwd: cwd}, true
}

// readCmdline is process pid's argv; none for a kernel thread or a zombie.
func readCmdline(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("read process %d command line: %w", pid, err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00"), nil
}

// descends reports whether pid is a descendant of root in the tree that
// parent (pid → ppid) describes.
func descends(pid, root int, parent map[int]int) bool {
	for hops := 0; pid > 1 && hops < len(parent); hops++ {
		pp, ok := parent[pid]
		if !ok {
			return false
		}
		if pp == root {
			return true
		}
		pid = pp
	}
	return false
}

// interpreters run the CLI as a script: npm's claude is a node script
// (#!/usr/bin/env node), which the kernel runs as `node /path/claude …`.
var interpreters = []string{"node", "nodejs", "bun", "sh", "bash", "dash", "zsh"}

// claudeArgs returns the CLI's arguments when argv runs the CLI: the program
// (or an interpreter's script, past the interpreter's own options) is named
// claude, claude.exe or one of names, is claude-code's cli.js, or is a
// version the native installer keeps in …/claude/versions/.
func claudeArgs(argv, names []string) ([]string, bool) {
	prog, args := argv[0], argv[1:]
	if slices.Contains(interpreters, filepath.Base(prog)) {
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:]
		}
		if len(args) == 0 {
			return nil, false
		}
		prog, args = args[0], args[1:]
	}
	base := filepath.Base(prog)
	switch {
	case base == "claude", base == "claude.exe", slices.Contains(names, base),
		base == "cli.js" && strings.Contains(prog, "claude-code"),
		strings.Contains(prog, "/claude/versions/"):
		return args, true
	}
	return nil, false
}

// sessionFlag returns how args name session id ("" when they do not):
// --resume, -r or --session-id with the id (as the next argument, after =,
// or glued to -r), or --continue (-c). With --fork-session the CLI writes
// a new session, so it is none. Arguments after -- are not options.
func sessionFlag(args []string, id SessionID) string {
	var how string
	cont, fork := false, false
	is := func(v string) bool { return strings.EqualFold(v, string(id)) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--fork-session":
			fork = true
		case a == "--continue", a == "-c":
			cont = true
		case a == "--resume" || a == "-r" || a == HowSessionID:
			if i+1 < len(args) && is(args[i+1]) {
				how = flagHow(a)
				i++
			}
		case strings.HasPrefix(a, "--resume=") && is(a[len("--resume="):]),
			strings.HasPrefix(a, "-r") && !strings.HasPrefix(a, "-r=") && len(a) > 2 && is(a[2:]):
			how = HowResume
		case strings.HasPrefix(a, HowSessionID+"=") && is(a[len(HowSessionID)+1:]):
			how = HowSessionID
		}
	}
	switch {
	case fork:
		return ""
	case how != "":
		return how
	case cont:
		return HowContinue
	}
	return ""
}

// flagHow is the How of a flag taking the id as its next argument.
func flagHow(flag string) string {
	if flag == HowSessionID {
		return HowSessionID
	}
	return HowResume
}

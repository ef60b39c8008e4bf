// Package transcript reads the Claude Code CLI's own session transcripts:
// the JSONL files the CLI (2.1.328) appends every session to, whoever runs
// it — untether in stream-json mode, a person at an interactive terminal,
// or a person's `claude -p`. It is read-only and standalone: it never
// writes a transcript and depends on nothing else in untether.
//
// # Where transcripts are
//
// A CLI whose HOME is home, run in working directory cwd, writes session
// id to home/.claude/projects/<ProjectName(cwd)>/<id>.jsonl (Dir, Path).
// The name is the CLI's own rule: every UTF-16 code unit of the physical
// cwd (symlinks resolved, as getcwd sees it) that is not an ASCII letter or
// digit becomes '-'; past 200 characters it is cut and "-" plus base 36 of
// a 32-bit hash of the path appended. Each git worktree is its own cwd, so
// its sessions are in their own directory ("per branch"). Resuming a
// session (--resume, --continue, interactively or in -p mode) appends to
// the same file under the same id. Subagents' transcripts are in
// <id>/subagents/, not in the session's file, and are not read here.
//
// # What it guarantees
//
//   - Bounded work: Stamp reads a file's tail, Since from the mark on (and
//     the 1 MiB before it, for links, when something was appended), List at
//     most limit files (whole up to 4 MiB while one call has read under 64
//     MiB, else the first 1 MiB and last 256 KiB), Export at most the last
//     64 MiB. No line over 8 MiB is held in memory; such lines are skipped
//     and counted (Delta.Skipped, an export note).
//   - Hostile input is never fatal: a line that is not a JSON object of the
//     expected field types, or of an unknown entry type, is skipped. A
//     partial last line (the CLI still writing it) is not read until it is
//     whole, and a Mark never covers it.
//   - Only regular files are read: the last path component is opened with
//     O_NOFOLLOW (a symlinked transcript is refused, ErrNotRegular, never
//     followed out of the directory) and O_NONBLOCK, and fstat must say
//     regular file (so a FIFO neither blocks nor is read). List skips what
//     is not a regular file named <uuid>.jsonl.
//   - Since never counts from a stale offset: a file replaced (other inode),
//     truncated, or rewritten so the marked entry moved is reported
//     Rewritten and counted after the marked entry where it now is, or Lost
//     when it is gone.
//   - Export's output is a function of the file's bytes and its options
//     alone (golden-tested).
//   - A transcript that does not exist gives an error that
//     errors.Is(err, fs.ErrNotExist) recognises; List treats a missing
//     directory as no sessions.
//
// # What a turn is
//
// A turn is a user entry a person started: a prompt (typed, queued while
// Claude was busy, or sent by a -p caller) or a bash-mode "! command". The
// CLI marks prompts with promptSource ("typed", "queued", "sdk", "system")
// and turnOrigin ("human", "sdk", "task_notification", "scheduled", …);
// only human/sdk ones count. Tool results, meta entries (caveats),
// compaction summaries, slash commands and their output, interrupt markers
// and automatic turns (task notifications) are not turns; slash commands
// are reported apart (Delta.Commands). Transcripts without these marks
// (older CLIs) are classified by their text alone.
//
// # What could not be told
//
//   - Who ran a print-mode session. Every entry has an entrypoint: "cli"
//     for an interactive terminal, "sdk-cli" for -p in any format. So a
//     session a terminal started interactively is recognisable
//     (Summary.StartedAtTerminal), but untether's own runs and a person's
//     `claude -p` look the same. What does tell them apart is the caller's
//     own records: the uuid untether puts on each stream-json user message
//     becomes that entry's uuid (Turn.UUID, Summary.FirstPromptUUID).
//   - Exact turn counts of big files without reading them whole: List then
//     reports the CLI's own counter (turnPosition.turnIndex) from the tail,
//     which counts automatic turns too (Summary.TurnsExact is false).
//   - Which branch of a rewound or forked conversation is current, but for
//     Since: entries are exported in file order, abandoned branches
//     included. Since marks the turns off the line of the leaf written
//     last (Turn.Forked), and Delta.ForeignLine, told the last entry of
//     the caller's own CLI, takes that entry's line while nothing follows
//     it (line.go): with two branches a resume goes on from the leaf the
//     last CLI to exit named, which a caller that lets go of its CLI
//     before resuming can count on. A CLI killed names nothing, and which
//     branch a resume then takes is not told.
//   - The cost of a session still running: transcripts carry no cost per
//     message, only token usage (one copy per content block, counted once
//     here), and a "cost-state" line with the CLI's running total, written
//     when a CLI process exits (and on /cost; not after a SIGKILL). The
//     export shows the last one saved and the tokens of the answers it
//     shows (compaction calls are not among them).
//   - The CLI's overrides of the directory: CLAUDE_CONFIG_DIR and its
//     remote-session modes move transcripts elsewhere; untether sets
//     neither. Paths that are not valid UTF-8 are mapped as Go decodes them
//     (one U+FFFD per bad byte), which was not checked against the CLI.
//   - A file rewritten in place with the same size and mtime looks
//     unchanged to Since's fast path.
package transcript

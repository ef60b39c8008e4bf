// Package runner owns the Claude Code CLI: one supervised long-lived process per
// chat, spoken to in stream-json control-channel mode. It decodes every stdout
// frame into typed values, translates frames into a small set of Events for the
// bridge, and writes only validated lines to the CLI's stdin, because a single
// malformed line kills the process. It knows nothing about Telegram.
//
// Supervision (process.go, supervise.go, proctree_linux.go, reap_linux.go):
// every CLI runs in a process group of its own and carries a unique tag in its
// environment, which its tools inherit. When a CLI process ends, for whatever
// reason, everything of its tree is killed: its group, and the tools that left
// the group (setsid: ssh-agent, dev servers) found by the tag or as descendants.
// The daemon is a child subreaper, so such tools become its children when
// their parent exits; an orphan reaper reaps them (no zombies) while leaving
// the children an exec.Cmd waits for alone: CLIs it started (registered) and
// anything in the daemon's own process group (git, ffmpeg, the voice command). A stdout line over MaxLineBytes
// kills the CLI (ErrLineTooLong), and a panic in a session's reader or
// supervisor goroutine kills only that CLI (ErrInternal); both are reported
// in ProcessExited.Err, and the next message resumes the session.
//
// Every child is started from one OS thread locked for the life of the
// process (spawn_linux.go), so the CLI's parent-death signal (SIGKILL) fires
// only when the daemon dies, however it dies. That signal reaches the CLI
// alone: its tools' commands and setsid'd tools outlive a SIGKILLed daemon.
// A ProcessTracker hears each CLI's pid, /proc start time and tag, so the
// next start can KillLeftovers of a killed instance (by group and by tag)
// without ever touching a reused pid, and without counting a CLI the kernel
// is still tearing down (PF_EXITING).
//
// A session normally names its conversation (--session-id, then --resume);
// with Config.Continue its first process takes the latest conversation in
// the workdir (--continue), e.g. one started at a terminal, and adopts the
// id the CLI reports. A session id is only ever a canonical UUID and a model
// only a plain model name (ids.go: ParseSessionID, CheckModel), each passed
// glued to its flag (--resume=<id>, --model=<name>): an id the CLI reports
// in another form is not adopted, and events carry none. With Config.Remote the CLI runs on another machine
// through the system ssh client (remote.go): the supervised process is the
// local ssh, the stream-json crosses ssh's pipes, and the command ssh runs
// is a constant that every login shell (fish and csh included) reads alike.
// The environment, the directory, the CLI and its arguments are sent on
// stdin ahead of the stream-json, never on a command line, and a small
// POSIX sh wrapper on the remote side reads them without evaluating them
// and ties the CLI to the channel, so a closed or dead connection ends it
// (ssh without a terminal would leave it running).
//
// Each spawn resolves the binary and checks the workdir again (preflight.go):
// an updated binary is used by the next process, and a missing one or a
// deleted workdir is a *MissingError (ErrBinaryMissing, ErrWorkdirMissing)
// that starts, stops and recreates nothing. Durations are measured on the
// monotonic clock, so wall-clock jumps move no idle close or stall.
//
// Work between turns (background.go): a process with background tasks or
// pending wake-ups (ScheduleWakeup, CronCreate jobs, followed by id through
// CronDelete and CronList) is in StateWaiting, never idle-closed nor
// evicted; a recurring job keeps it waiting until it is deleted or expires.
// Session.Pending says what it waits for, and ProcessExited.Pending what an
// exiting process took with it: the CLI fires wake-ups only while it runs,
// and a --resume restores CronCreate jobs but not a ScheduleWakeup.
//
// Translation (translate.go) keeps what the user must see of every frame:
// a server tool's result block ends its row with the tool's own outcome
// (server_tools.go); a hook that blocks a call is named with what it wrote,
// and a failed Stop hook's notification becomes a Notice (hooks.go);
// system/init's MCP servers and their start status ride on TurnStarted. A
// frame or block it does not know is an Unknown event with its raw bytes.
//
// Effort (effort.go) is the CLI's --effort, which it sends to the API as
// output_config.effort. What CLI 2.1.328 does, measured against the fake
// API (realcli_effort_test.go):
//
//   - --effort takes low, medium, high, xhigh and max, in any case. Any
//     other value is not an error: the CLI warns on stderr ("Unknown
//     --effort value 'bogus' — ignoring it and using the default effort.
//     Valid values: low, medium, high, xhigh, max."), exits 0 and uses its
//     default, medium for the current models (opus, sonnet and haiku 5.5,
//     1M-token windows). The runner passes only the five levels, glued
//     (--effort=<level>), and CheckExtraArgs refuses the flag.
//   - What reaches the API depends on the model: claude-sonnet-4-5 and
//     claude-haiku-4-5 get no output_config at all (their thinking is
//     budget_tokens), claude-opus-4-5 defaults to high and gets xhigh and
//     max as high.
//   - CLAUDE_CODE_EFFORT_LEVEL in the CLI's environment overrides --effort
//     and every live change, silently; the config refuses it in env tables.
//   - The live process changes effort with the control request
//     apply_flag_settings {"settings":{"effortLevel":<level>|null}}, from its
//     next API call; null goes back to the model's default, not to the
//     --effort it started with. It answers success to anything, and
//     silently ignores a level it does not know (including "High", "auto"),
//     while a number drops output_config.effort altogether and "ultracode"
//     switches a mode of its own. So SetEffort sends only the five levels,
//     and reads back with get_settings ("applied":{"effort":…}, null when
//     the model takes none) what the API will really get. The change is
//     kept in memory only; the next process gets it as --effort.
//
// ContextUsage (context_usage.go) asks the CLI how full its context is
// (get_context_usage): tokens, window, and whether and where it compacts by
// itself. Measured with the fake API reporting a large input_tokens
// (realcli_context_test.go): TurnCompleted.ContextPercent is the last
// request's input and output tokens over the model's window (850,000 of
// 1,000,000 is 85 %). With auto-compaction on, the CLI compacts before the
// next request once the last one held 977,000 tokens of a 1M window
// (get_context_usage calls its threshold window − 33,000 = 967,000, 96.7 %).
// For the 200k-window models (claude-*-4-5) it reports 167,000, but a
// reported usage up to 250,000 made it compact nothing before the next
// request: what it counts there was not learnt. With any model, when the
// API refuses a prompt as too long it compacts and sends it again.
// DISABLE_AUTO_COMPACT turns both off (a too-long prompt then fails the turn:
// terminal_reason "prompt_too_long", "Prompt is too long"); DISABLE_COMPACT
// also turns off /compact (CompactDisabled). CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
// changed nothing here.
//
// FindOutside (outside_linux.go) finds the claude processes that run a
// session on this machine but are not untether's (a person's terminal), by
// their command line in /proc: --resume, -r or --session-id with the id, or
// --continue in the session's directory; untether's own are left out by the
// tree tag, by descending from the daemon, and by the pids the caller names.
// It lives here because the tag and the /proc reading are the runner's.
//
// AuthStatus (auth.go) asks the CLI whether it is logged in, and how
// (`claude auth status`): an API key, a token, or a stored claude.ai login
// with the latest moment its sign-in ends. auth.go records which shapes of
// the answer were seen from the real CLI and which are read from its code.
package runner

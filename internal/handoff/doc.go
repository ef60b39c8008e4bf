// Package handoff makes the resume line of issue 26: the shell command a
// person pastes into a terminal to continue, at the terminal, a Claude
// session untether runs from the phone, in the same session (the CLI's
// --resume appends to the session's own transcript; nothing is forked).
// It is pure: Resume.Line builds the line from the session id, where and
// how untether runs the CLI, and (for a project on this machine) the
// daemon's account and the project directory's owner, which LocalAccounts
// reads. Finding a claude already running the session at a terminal is
// runner.FindOutside (it reads /proc next to the runner's own process
// tracking), and telling whether the terminal extended the transcript is
// internal/transcript (Since, Delta.Foreign).
//
// # The line
//
// On this machine, run by the daemon's own account:
//
//	cd '/srv/app/.worktrees/fix' && claude --resume 5f0c…
//	cd '/srv/app' && env HOME='/srv/claude-home' claude --resume 5f0c…
//
// When the daemon runs as a service account or as another account than
// the project directory's owner (SwitchTo), the line becomes that account
// first; not with sudo -i, whose login shell is nologin for the system
// unit's account, but with sudo -H and sh:
//
//	sudo -u untether -H sh -c "cd '/srv/untether' && claude --resume 5f0c…"
//
// On another host, with the project's ssh options and a
// terminal (-t) for the CLI's interface; a directory under the login's
// home keeps ~/ outside the quotes, so that it is expanded:
//
//	ssh -t -p 2222 dev@gpu01 "cd ~/'src/model' && claude --resume 5f0c…"
//
// HOME: the CLI keeps a session under $HOME/.claude/projects/<dir>/, so
// the line sets HOME (env HOME=…, which every shell runs alike) when
// untether gives the CLI another HOME than the account's own from the
// password database; on another host, whenever the project sets one.
//
// The binary is the one configured, as written: a command name ("claude",
// the default) is found on the PATH of whoever runs the line, which is
// what a person expects of their terminal; an absolute path is written as
// it is, since it is where the daemon's CLI really is (and the same
// version wrote the transcript), and a command name may not be on the
// target's PATH after sudo (secure_path) or ssh.
//
// What a person types: the line alone, in a terminal; the CLI opens its
// interface on the conversation (tested on a pseudo-terminal: the phone's
// turn on screen, a prompt typed, /exit). Without a terminal (stdin not a
// TTY) the same line runs one turn in print mode, reading the prompt from
// stdin, which is how the tests run it unchanged through sh and ssh
// (`claude --resume <id>` with nothing on stdin exits 1 instead).
//
// # Quoting
//
// Each part of the line is read by shells untether does not choose (the
// person's, sh under sudo, the remote login shell), so it is written in a
// form that sh, bash, zsh and fish (3.0 and later, for &&) all
// read as the same bytes (quote.go): bare when it holds only letters,
// digits and _ . / : @ + , - (and = after its first character); else
// single-quoted, with ' and \ outside the quotes as \' and \\ (fish reads
// \' and \\ as escapes even inside single quotes). The directory is always
// quoted. A command handed to another shell as one word (ssh's remote
// command, sh -c's) is double-quoted when it holds none of $ ` \ " ! and
// no newline, else quoted like any word.
//
// Line makes no line for values a message cannot show truly: text that is
// not UTF-8, control characters other than tab and newline, and the
// bidirectional controls (ErrUnshowable); nor for what untether would not
// run (ErrInvalid): a session id that is not a UUID, a relative directory
// (on another host: neither absolute nor ~/…), a relative binary path on
// this machine, a binary starting with - or holding =, a host starting
// with -.
//
// # What is not known
//
// Who will paste the line: SwitchTo assumes the project directory's owner.
// csh and tcsh are not covered (no VAR=value prefix is used, but a newline
// inside quotes is an error there). The ssh options are the daemon's: a
// key file named in them may not be readable by the person.
package handoff

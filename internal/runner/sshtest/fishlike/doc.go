// Command fishlike is a login shell for sshtest that reads command lines by
// fish's rules, for tests that a remote command line means the same to
// every login shell. sshd runs it for every connection (ForceCommand),
// with the client's command in $SSH_ORIGINAL_COMMAND, as it would run a
// login shell with -c.
//
// Fish differs from POSIX shells where quoting meets backslashes: inside
// single quotes \' is a quote and \\ a backslash, so a word quoted for a
// POSIX shell that has a backslash before a quote ends its quoting early,
// and what follows is a command. fishlike parses words,
// quotes, escapes, comments and ; and newline between commands as fish 3
// does, and runs each command in turn (status: the last one's). A command
// with something it does not implement (variables, globs, substitutions,
// pipes, redirections, braces) is not run, as if it were unknown (status
// 127), never guessed at; the others are, as fish would run them.
package main

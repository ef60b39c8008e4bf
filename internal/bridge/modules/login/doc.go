// Package login is the CLI's login as the chats see it (issue 27 §4):
// /status says whether and how Claude Code is logged in (`claude auth
// status`, kept for a while and asked off the actor, auth.go); an answer
// warns when a claude.ai sign-in ends within a day; a turn that failed
// because the CLI is not logged in (or its login was refused) offers 🔑
// Log in in a private chat; and /login, in a private chat only, relays
// the CLI's own `claude auth login` (relay.go): the sign-in page as a
// button, the code sent back as a reply (deleted at once), the outcome.
// The code and any token never reach a log line or a message.
package login

// Package places is where a chat works: /project, /branch (git
// worktrees), /topic (a forum topic bound to a project), /sessions (Resume
// buttons) and /continue (the latest conversation in the directory, a
// terminal's too, when the chat may see it); and the hand-over of a
// session between the phone and a terminal (issue 26), both ways, without
// forking it.
//
// Projects follow the settings model: a chat (or forum topic) stores only
// the project and branch its users chose, by name; the project's path,
// model, modes and env come from the config at every spawn. A chat keeps
// one session per (project, branch), so switching back resumes. What a
// place is, how a chat moves between them and which projects a chat may
// use (a project's allowed_chat_ids) are the engine's (chat's
// projects.go, projects_allowed.go); this module is the commands and menus
// that move it. Git runs off the actor, with the daemon's allow-listed
// environment only; a worktree that is missing or dirty is said so, never
// silently replaced by the main checkout (worktrees.go). /continue takes a
// session started outside untether only into a private chat, never into a
// group where everyone would read it (continue.go).
//
// The hand-over: each answer ends with the resume line, the command that
// goes on with its session at a terminal (internal/handoff builds it from
// the project's directory, binary, HOME and host, and the daemon's
// account), and 💻 Terminal, which sends the line alone and closes the
// chat's CLI once its turn is over (handoff.go; a message that reaches
// Claude here while it closes takes the session back, and the chat is
// told so); /status and /sessions show the line too. Before each message to Claude (gate.go), a claude
// outside untether running the session on this machine holds the message
// and asks first (outside.go: runner.FindOutside; a held message's update
// stays unconfirmed, so a restart hands it in again), and a transcript that
// someone else extended makes the message resume the session in a fresh
// CLI, saying how many turns it picked up (pickup.go: transcript.Since and
// Delta.ForeignLine, by the uuids of untether's own messages), and how many
// it did not: turns typed while Claude here was busy are on a branch the
// session does not go on with. /sessions also
// lists the place's sessions started outside untether, from the CLI's own
// transcripts, in private chats only (sessions.go). For a project on
// another host none of this can be checked, and untether says so.
package places

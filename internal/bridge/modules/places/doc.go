// Package places is where a chat works: /project, /branch (git
// worktrees), /topic (a forum topic bound to a project), /sessions (Resume
// buttons) and /continue (the latest conversation in the directory, a
// terminal's too, when the chat may see it).
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
package places

// Package chat is the bridge's engine: one actor per Telegram chat (or
// forum topic) that owns the chat's Claude session and turns the CLI's
// events into progress, answer and approval messages through the paced
// outbox. Features are modules (internal/bridge/modules/*) that register
// with the engine's Registry; the engine imports none of them.
//
// # The actor
//
// A chat's actor (chat.go) takes its mailbox (messages and presses the
// bridge admitted, work posted back by its own goroutines) and its CLI's
// events one at a time, and never blocks: handing a message to the CLI
// (which may start it, or wait for a live-process slot while every slot is
// busy) runs off the actor, one message at a time and in order
// (dispatch.go); a wait for a slot is shown with its reason and /cancel
// stops it, and the notice becomes the turn's progress message once the
// wait ends (slot_notice.go). A message's update is confirmed only once
// the CLI has it. Work a chat or a module offloads (control requests, git,
// downloads, answers to presses) is tracked, and Shutdown waits for it
// (work.go). The chat's logger names the chat and its session, and is
// never changed in place.
//
// # Turns
//
// A turn (turn.go) gets a progress message after 800 ms, edited in place
// and shared by staleness; one whose send has not got through the
// Telegram budget when the answer goes out is never sent. In a private
// chat the answer streams as a draft (draft.go). The answer is sent as new
// messages, headed and annotated by the modules (AnswerHeading,
// AnswerNotes, OnAnswer). A turn that prints nothing for stall_after says
// so (stall.go). Messages the CLI had queued when it died are sent again
// (queued.go). Every turn is charged to the chat that started it, also
// those of a session it let go of and an estimate for one whose CLI died
// (turn_costs.go). A CLI with background work is never idle-closed; a
// close that stops such work (a restart, /new, a switch, the CLI's crash)
// says which background tasks stopped and hands the lost wake-ups to the
// OnWorkStopped hooks (background_work.go; modules/wakeups offers
// ▶️ Re-arm).
//
// # Approvals, questions and menus
//
// A can_use_tool request becomes a message with Approve, Deny and Always
// (approvals.go); the answer is written to the CLI first and recorded in
// the audit log only then. AskUserQuestion is asked one question after
// another in one message; a reply to it answers the current question and
// never reaches Claude as a prompt (questions.go). Choice menus are
// registered kinds (menus.go). Every button's token belongs to one chat
// (buttons.go): the bridge refuses a press from anywhere else.
//
// # Places and sessions
//
// A chat works in a place, a project and optionally a git worktree of it
// (projects.go, worktree_dirs.go), chosen by its users, else the config's
// default; everything about the project comes from the config at each
// spawn (spawn.go), and a project's allowed_chat_ids keep other chats out
// (projects_allowed.go). A chat keeps one session per place and resumes it
// (sessions.go). A session id from the state database reaches the runner
// only as runner.ParseSessionID accepts it.
//
// # Restarts and crashes
//
// A drain lets working turns finish, stops turns blocked on a human at
// once and offers ▶️ Continue after the restart, and keeps within a fixed
// budget once its context ends (drain.go). At start, what the previous run
// left is reconciled: progress messages, approvals (a crash's get
// ▶️ Continue too), the outbox journal (reconcile.go). A group that became
// a supergroup keeps its sessions (migrate.go). Old state is pruned daily
// (retention.go). A state write the disk refuses never stops a chat
// (internal/bridge/durable).
//
// # Modules
//
// A Module registers commands, buttons (in the engine's table, or stored
// so they survive a restart), menus and hooks with the Registry
// (registry.go); a Starter also runs background work. It gets a Host
// (host.go: config, clock, store, chats) and, in every hook, the *Chat,
// whose doors (doors*.go) are all a module may use: reply, send to Claude,
// post to the actor, offload work, place, session, record, menus. Its
// per-chat state lives in a typed Slot the actor owns (slot.go), and work
// that waits for a chat to be free (a scheduled run, a webhook's) in a
// WaitQueue: every module's such work joins the chat's one queue, which
// goes oldest first (waitqueue.go). A limit retry, which goes back to the
// place it was refused in, waits on its own (schedules). The bridge's
// update routing reaches the engine through router.go.
package chat

// Package chat is the bridge's engine: it connects Telegram to runner sessions: it polls updates, routes
// them into one actor per chat (or forum topic), turns runner events into
// progress, answer and approval messages through a paced outbox, and persists
// offsets, sessions, live messages and approvals so a restart loses nothing. It
// is the only package that talks to the Telegram Bot API.
//
// A chat's actor never blocks. Handing a message to the CLI (which may start
// it, or wait for a live-process slot while every slot is busy) runs off the
// actor, one message at a time and in order (dispatch.go); a wait for a slot
// is shown to the user with its reason and /cancel stops it, the notice
// becomes the turn's progress message once the wait ends (slot_notice.go),
// and the message's update is confirmed only once the CLI has it. A
// progress message whose send has not got through the Telegram budget by
// the time the answer goes out is never sent (turn.go). Messages the CLI
// had queued when it died are sent again (queued.go). A turn that prints
// nothing for progress.stall_after says so, and after stall_notify_after
// asks once whether to cancel (stall.go). A drain stops turns blocked on a
// human decision at once and offers ▶️ Continue after the restart (which
// goes back to the approval's session, when the chat moved), leaves
// messages waiting for a slot to the next start, and Shutdown keeps within
// a fixed budget once its context ends (drain.go). A group upgraded to a
// supergroup keeps its sessions (migrate.go); decided approvals and turns
// older than [state] retention are pruned (retention.go). A turn a drain
// stops shows as stopped for a restart, not as cancelled by the user. Service
// messages (a pin, a member joining, a topic opened) get no reply and never
// reach Claude (ingress.ServiceOf); a kept message is the update as Telegram
// sent it, promised for after a restart only once it is on disk (route.go).
// A crash's waiting approvals get ▶️ Continue at the next start
// (reconcile.go). MCP servers that failed to start are named once per
// session (mcp_notice.go). A CLI with background work is never idle-closed
// (runner's StateWaiting); the turn it starts by itself is headed with the
// jobs that ended (modules/background), and a close that stops such work
// (a restart, /new, a switch, the CLI's crash) says which background tasks
// stopped and hands the lost wake-ups to the OnWorkStopped hooks
// (background_work.go; modules/wakeups offers ▶️ Re-arm). Resource links
// an MCP tool returns are listed under the answer, and linked project
// files sent as /get would (links.go).
//
// In a private chat the answer streams as a Telegram draft while Claude
// writes it, and the progress message keeps the tool rows; in groups and
// forum topics, and where Telegram refuses drafts, the streamed text is the
// tail of the progress message (draft.go).
//
// An approval is answered to the CLI first and recorded in the audit log only
// then, so the log never claims a decision Claude did not get. AskUserQuestion
// requests are asked one question after another in one message (toggles and
// Done for a multi-select question); a Telegram reply to that message is the
// current question's free-text answer and never reaches Claude as a prompt.
//
// Projects (projects.go, settings.go): a chat or forum topic works in one
// project (and optionally a git worktree of it, worktrees.go) that its
// users chose, else the config's default; everything about the project
// comes from the config at each spawn (a live CLI keeps its directory, and
// its files are taken from there, until its session ends), and a project
// on another host runs the CLI through ssh. A project's allowed_chat_ids
// keep every other chat out of it (projects_allowed.go). A chat keeps one
// session per (project, branch): switching resumes, /sessions lists them
// with Resume buttons (sessions.go), /continue takes the directory's
// latest conversation when the chat may see it (continue_latest.go), and
// /topic makes a forum topic already bound to a project (topics.go). A
// session id read from the state database or a Resume button, and a
// stored or requested model, reach the runner only as
// runner.ParseSessionID and runner.CheckModel accept them: a damaged one
// is forgotten and the chat told (projects.go, models.go), a requested
// one refused.
//
// Every button press, of every kind, goes through routeCallback
// (buttons.go): the user and chat are allowed (a stranger's press is
// dropped like their messages, its log and answer rate-limited), the
// token names something live, and the chat and forum topic the press came
// from are the ones the token belongs to, since a client can send any
// callback data on any bot message it sees.
//
// Telegram is treated as hostile input, like the CLI's stream. Every
// getUpdates response passes through an update guard (pollGuard,
// guardUpdates) before go-telegram/bot decodes it: each update is decoded on
// its own, and one the library cannot decode (a union variant it does not
// know, a value of the wrong type) is repaired by dropping or replacing only
// the unreadable parts, so the user's text still reaches Claude; an update
// that cannot be repaired reaches the bridge as its bare id and is skipped
// with a log line. No update can stop polling or hold back the offset.
// Liveness (Healthy, which feeds the systemd watchdog, and PollTrouble, for
// STATUS=) counts a poll only once its updates are routed or skipped.
//
// Away from the keyboard (away.go and the files it names): /usage and
// budgets read the turns table, which records every turn (also those of
// a session the chat let go of, and an estimate for one whose CLI died
// before reporting its cost: turn_costs.go) and its project, so a
// project's own budget (budget_projects.go) counts its turns while the
// global one counts all; one scheduler goroutine sends scheduled
// prompts and prompts a subscription limit rejected, when due, through the
// chat's actor like a typed message, after an album or forwards the chat
// is collecting. A [[schedules]] entry with a project first moves the chat
// there (schedules_projects.go); a retried prompt goes back to the project
// and branch it was rejected in (limitretry_projects.go). A claimed run or
// retry stays pending in the store until its prompt reaches the CLI, so
// one that waited for a busy chat when the daemon stopped runs after the
// restart (pending_runs.go). A run or retry goes only while its chat is
// served and the user it is from (a schedule's creator, a prompt's
// author) is still allowed, checked at every run. Those, and budget days,
// go by an injectable Clock.
//
// A state write the disk refuses (full, read-only) never stops a chat: the
// bridge writes through stateWrites, which keeps refused writes in order
// and does them again once the disk takes writes, logs each kind of
// failure once with the path and the free space, and shows each chat at
// risk one notice saying what a restart would lose, deleted when all is
// saved again. Answers go out unjournaled meanwhile.
//
// A CLI binary or project directory gone at a spawn (runner.MissingError)
// is explained in the chat, naming the path; the daemon keeps running, the
// next message looks again, and no directory is ever recreated. A CLI
// updated in place is noticed by the version its turns report (world.go).
//
// Phone-first (phone.go and the files it names): files Claude writes to its
// chat's directory under .untether/outbox/ are sent after each turn (also
// one its process died in) through the outbox (photos, documents, albums;
// at most [files] max_files_per_turn, the rest counted in one message;
// journaled, then moved to .untether/sent/), /get PATH sends a project
// file behind [files] deny (never one of .untether's), a directory as a
// bounded zip, and a cut Edit/Write preview of a CLI on this machine
// offers 📄 Full diff (files_out.go, outbox_scan.go, get.go, get_zip.go,
// approvals.go). Claude's tools can write every .untether directory, so
// they are reached through internal/safefs only (own_dirs.go): one that is
// a link or not a directory is refused, reported once and left alone;
// nothing is followed through a link, every file is opened once without
// blocking, and that descriptor is what is sent. Voice notes, audio files and video notes are
// transcribed by the [voice] backend in the hand-over goroutine (voice.go,
// internal/voice); album parts and forwards (with a comment right after
// them) are collected into one prompt (batch.go); a reply quotes what it
// replies to (replies.go); an edited message is never re-sent by itself,
// only through its ✏️ Send edited version button.
package chat

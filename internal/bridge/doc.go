// Package bridge is untether's Telegram side, as cmd/untether wires it. It
// is a map of its sub-packages and a thin layer on top of them:
//
//	bridge/            New, Run, Shutdown; update routing: admission (admit.go:
//	                   allow-lists, group triggers), messages, edits and kept
//	                   updates (route.go), button presses (press.go), the poll
//	                   loop's liveness and 409s (poll.go, conflict.go); and
//	                   modules.go, the one list of modules, in hook order
//	bridge/chat/       the engine: one actor per chat or forum topic, turns,
//	                   progress, drafts, approvals, questions, menus, the hand-over
//	                   to the CLI, drain and reconcile; it defines Module,
//	                   Registry, Host, Slot and the chat's doors
//	bridge/modules/*   the features, each its own package that registers with
//	                   the engine and never imports another module: settings
//	                   (/mode /model), budget (/usage /budget), schedules (/at
//	                   /every, limit retries), places (/project /branch /topic
//	                   /sessions /continue), files (Claude's outbox, /get, full
//	                   diffs), phone (voice, attachments, albums, edits),
//	                   export (/export), metrics, triggers (webhooks),
//	                   effort, compact, login, panel, wakeups,
//	                   mcpnotice, background
//	bridge/ingress/    the getUpdates guard and repair, unions, offsets, the
//	                   command parser, 409 streaks
//	bridge/durable/    state writes kept in order and replayed on a full disk
//	bridge/outbox/     the Bot API calls the chats make, paced and journaled
//	                   (pinning a /panel message goes to the bot directly)
//	bridge/owndir/     .untether in a project, reached through safefs only
//	bridge/state/      the SQLite state database
//
// Run polls Telegram through the ingress guard; each update is admitted
// (an allowed user, a served chat, a message meant for the bot) or dropped
// quietly, kept in the state database until its chat handled it (so a
// crash loses nothing), and handed to its chat's actor in the engine. A
// press is checked the same way, and must come from the chat (and forum
// topic) its button belongs to. Healthy, which feeds the systemd watchdog,
// holds while polls complete with every update routed or skipped and no
// chat's mailbox is stuck.
package bridge

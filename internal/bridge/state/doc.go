// Package state is the daemon's durable memory: a single SQLite database
// (modernc.org/sqlite, so no cgo) holding everything a restart must not lose.
//
// It keeps the Telegram update offset, per-chat session identity and settings
// (the project and branch a chat chose among them), the session each (chat,
// project, branch) resumes and the history of every session a chat ran,
// the ids of "live" Telegram messages (progress messages and pending approval
// prompts) so a restarted daemon can reconcile orphans, the approval audit log
// with an atomic decide-once rule, per-turn statistics with a cumulative cost
// per chat, and an outbox journal of sends that must survive a crash. For
// working away from the keyboard it also keeps each turn's tokens (for
// /usage and budgets), the last known subscription windows, prompts waiting
// for a rate limit to reset, scheduled prompts (with the run that fired and
// has not reached the CLI yet, so a restart does not lose it), and a few
// named settings. For webhooks ([[triggers]]) it keeps the runs accepted
// and not yet handed to the CLI, and the deliveries seen within the replay
// window, so a replay is caught across a restart.
//
// A Store is safe for concurrent use by many goroutines (one actor per chat).
// Writes are serialised in-process and committed before the method returns;
// reads run concurrently with writes thanks to WAL mode. The package knows
// nothing about Telegram's API or the CLI beyond the identifiers it stores.
//
// A write the storage cannot take (a full disk, a read-only file system)
// fails with an error wrapping ErrStorage (ErrDiskFull, ErrReadOnly) and
// leaves the database as it was; the same Store takes writes again once
// the cause is gone. CheckWritable probes for that, FreeBytes reports the
// space left, and InjectWriteFault simulates the failure in tests.
package state

// Package triggers runs the prompts of webhooks ([[triggers]]): the
// service's POST /hooks/<name> verifies a delivery and renders its prompt
// (internal/service/webhook), and hands it to this module, its Firer.
//
// A run goes like a scheduled prompt: in the trigger's chat (and topic),
// as a message from nobody, so budgets, the permission mode and approvals
// apply as to any message; its progress and its answer say "⚡ trigger
// <name>". It waits while the chat is busy (a turn, an approval, a message
// on its way to Claude, an album being collected), then goes, after the
// runs and scheduled runs that came before it (chat.WaitQueue). After a
// restart the interrupted runs are handed over in the order they came,
// but not interleaved with the schedules' replayed runs. A trigger that names a
// project moves the chat there first, the way /project does, and says so;
// a run whose project is gone or closed to the chat is skipped with a
// message. The chat must still be served when the run goes (the
// allow-lists of the moment); if it is not, the run is dropped and logged.
//
// An accepted run is in the state database before the sender hears 202
// (state.TriggerRun), and leaves it once its prompt reached the CLI or the
// chat was told why not: a restart while it waits runs it after all, once
// (Start replays them). While untether drains, a delivery is refused with
// 503 (webhook.ErrUnavailable), so the sender's retry reaches the next
// start; a disk that refuses the run gets the same answer. The module is
// also the webhooks' Seen store, in the state database, so a delivery sent
// again is caught across a restart too.
package triggers

// Package metrics feeds untether's Prometheus metrics
// (internal/service/metrics) from the engine: it hooks into the registry
// and reads the engine's levels at each scrape, and no feature counts
// anything itself.
//
// Events (the registry's hooks):
//
//   - turns: a turn starts when the CLI says so (system/init) and ends
//     once, by its result (answered, failed, limited by --max-budget-usd
//     or a subscription limit, cancelled by a person, stopped by a
//     restart) or by its CLI dying (crashed; stopped or cancelled when
//     untether asked it to stop); its cost and tokens, as the CLI reports
//     them, count for the project it ran in (turns.go);
//   - CLI processes: each spawn, each one that died unasked (a crash), and
//     each spawn of a chat whose previous CLI crashed (a restart);
//   - approvals: how long each waited, by how it ended (OnApprovalEnd);
//   - the outbox (delivery.go): the time from the bridge taking a result
//     to the sendMessage call that delivered the answer's first part, how
//     long a progress message showed the same thing before an edit
//     replaced it, both from the calls Telegram accepted
//     (outbox.Options.Delivered); and the retry_after of every 429.
//
// Levels (probes.go), read at each scrape through the Host: live CLIs,
// chats waiting for a live slot, approvals waiting for a person, the
// outbox's queues by priority, chats paused by a 429, and when getUpdates
// last succeeded.
//
// Bot API calls by method and status, the getUpdates lag, refused state
// writes and webhook deliveries are counted where they happen, outside the
// engine (the bridge's update loop, durable's Watcher, the service).
//
// Labels are a project's name (from the configuration), an outcome, a
// decision: never a chat or a user.
package metrics

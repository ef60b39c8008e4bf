// Package health answers /healthz and /readyz for orchestrators and load
// balancers, from the signals the daemon already keeps.
//
// /healthz is liveness: 200 while the daemon makes progress, 503 with the
// reason in the body when it does not. The body is public (the listener
// also serves webhooks), so a reason whose text is the operator's alone
// is a Private error and shows its public text: a wedged chat is counted,
// its id left to the log; an update loop that stalled says how, without
// the cause, which may quote an update. Its source is Liveness, the very
// check that feeds systemd's watchdog ((*bridge.Bridge).Healthy has its
// shape: the update loop polled recently and handled what it received, and
// no chat's mailbox is stuck), so a supervisor watching /healthz restarts
// the daemon exactly when systemd would. Trouble a restart would not cure,
// or would make worse, does not fail it: a full disk, for one, leaves
// /healthz at 200 and names the trouble in the body (Conditions; their
// text is shown as raised, a state write's SQLite error included, which
// may name the database's path), because
// untether keeps refused state writes in memory until the disk takes them
// again and a restart would lose them.
//
// /readyz is readiness: 200 once the first getUpdates succeeded and until
// the drain starts (Gate), 503 with the reason otherwise, so a balancer
// stops sending webhooks to a daemon that is stopping.
//
// Bodies are plain text, never cached.
package health

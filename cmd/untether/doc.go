// Command untether runs the Telegram ⇄ Claude Code daemon.
//
//	untether [run] [--config FILE]     run the daemon (default)
//	untether check [--config FILE] [--online]
//	untether version
//	untether help [COMMAND]
//
// -h or --help after any command prints the usage and that command's flags
// on stdout (exit 0); a wrong flag or argument prints the same on stderr
// (exit 2). See usage.go.
//
// main only wires packages together: config → logger → state → runner pool
// → bridge, plus signals and systemd notifications, and with [http] listen
// the service (service.go): the metrics the bridge feeds, the readiness
// gate (ready at the first poll, not from the drain on), the /healthz
// troubles refused state writes raise, the webhooks' triggers (replaced on
// SIGHUP), and the listener, started before the bridge runs and closed
// after it stopped.
package main

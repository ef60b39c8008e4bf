// Command untether runs the Telegram ⇄ Claude Code daemon.
//
//	untether [run] [--config FILE]     run the daemon (default)
//	untether check [--config FILE] [--online]
//	untether version
//
// main only wires packages together: config → logger → state → runner pool
// → bridge, plus signals and systemd notifications.
package main

// Command untether runs the Telegram ⇄ Claude Code daemon; see main.go for
// its subcommands. The package only wires the internal packages together.
package main

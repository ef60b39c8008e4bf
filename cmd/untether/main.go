// Command untether runs the Telegram ⇄ Claude Code daemon.
package main

func main() {}

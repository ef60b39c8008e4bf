// Package runner owns the Claude Code CLI: one supervised long-lived process per
// chat, spoken to in stream-json control-channel mode. It decodes every stdout
// frame into typed values, translates frames into a small set of Events for the
// bridge, and writes only validated lines to the CLI's stdin, because a single
// malformed line kills the process. It knows nothing about Telegram.
package runner

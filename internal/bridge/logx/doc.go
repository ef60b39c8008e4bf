// Package logx builds the daemon's zerolog logger: JSON for journald,
// console for a terminal, and a writer that blanks out secrets (every one
// the config holds: the bot token, the voice API key; a reload adds new
// ones) in every line, whatever produced it.
package logx

// Package logx builds the daemon's zerolog logger: JSON for journald,
// console for a terminal, and a writer that blanks out secrets (the bot
// token above all) in every line, whatever produced it.
package logx

// Package render turns Claude's Markdown and accumulated turn state into
// Telegram HTML and inline keyboards. It is pure: no I/O and no clock of its
// own, so every output is a function of its inputs and can be golden-tested.
package render

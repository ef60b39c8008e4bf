// Package background heads the turn the CLI starts by itself when
// background work it was told about ends (origin task-notification), so
// the user knows why an answer came that nobody asked for: "🧵 The
// background job “slow job” finished". The job's summary is the CLI's
// task_notification, which comes between turns, before the turn it starts.
package background

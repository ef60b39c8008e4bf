// Package wakeups follows the wake-ups Claude sets for itself
// (ScheduleWakeup, CronCreate): /status lists the ones its CLI waits for,
// and when the CLI must close anyway (a restart, /new, a project or branch
// switch, a crash of the CLI or of untether) the chat is told which were
// lost and offered ▶️ Re-arm.
//
// What is lost is what the real CLI loses (runner/background.go): a
// ScheduleWakeup is gone with its process, and a --resume does not bring it
// back; a session CronCreate job comes back when the session is resumed,
// but fires only while a CLI runs that session. So ▶️ Re-arm resumes the
// session the wake-up was set in (moving the chat back to it after /new
// or a switch) and asks Claude there to set the wake-up again: a
// ScheduleWakeup with the same prompt and reason, due at the same time
// (at least the CLI's 60 s from now); a CronCreate job only if CronList
// does not show it back already. The CLI's answer then shows the wake-up
// armed (its progress row, /status). A durable CronCreate job is kept on
// disk by the CLI and is not reported lost.
//
// The button's token lives in the state database (lost_wakeups), so it
// works after a restart; the first press wins. While a CLI waits for a
// wake-up, the wake-up is kept there as pending (pending.go): a daemon that
// is killed takes its CLIs with it and can tell nobody, so the next start
// tells the chats from those rows (Start).
package wakeups

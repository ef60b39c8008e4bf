// Package cronspec reads the cron expressions of scheduled prompts (/every
// and [[schedules]]): the standard five fields ("0 9 * * 1-5") or a
// descriptor ("@daily", "@every 2h"). Parsing is github.com/robfig/cron/v3's,
// so the dialect is the one its users know; this package only narrows it to
// what untether supports (no seconds, no embedded time zone, no interval
// under a minute) and computes the next run in a given zone.
package cronspec

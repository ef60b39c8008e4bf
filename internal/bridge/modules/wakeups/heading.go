package wakeups

import (
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/runner"
)

// A turn a wake-up starts is headed with the wake-up, so the user knows
// why an answer came that nobody asked for: "⏰ Woken up by the job Claude
// set (Every minute): poll the build". By the time the chat sees the turn
// start, the runner has already taken the wake-up off its pending list, so
// the module keeps the list it saw last.

// chatWakes is a chat's wake-up state.
type chatWakes struct {
	known  []runner.Wakeup    // the CLI's pending wake-ups when last looked at
	firing string             // the heading of the turn a wake-up started, until it is answered
	kept   map[keptKey]string // pending rows (pending.go), by session and wake-up
	resync time.Time          // when a re-sync is due, zero if none is set
}

// follow keeps the pending list (and its rows) fresh and names the
// wake-up that started a turn.
func (m *Module) follow(c *chat.Chat, ev runner.Event) {
	st := m.state.Get(c)
	switch e := ev.(type) {
	case runner.TurnStarted:
		if e.Wakeup != "" {
			w, ok := firedOf(st.known, e)
			st.firing = heading(w, ok)
		}
		m.sync(c) // pending.go
	case runner.ToolFinished, runner.TurnCompleted, runner.ProcessStarted:
		m.sync(c)
	}
}

// firedOf finds the wake-up a turn's start names among known: a loop
// wake-up by its time, a cron fire as the soonest one-shot job, else the
// recurring one (the CLI names no job). ok is false when none matches.
func firedOf(known []runner.Wakeup, e runner.TurnStarted) (w runner.Wakeup, ok bool) {
	for _, k := range known {
		switch {
		case e.Wakeup == runner.WakeupLoop && k.Tool == "ScheduleWakeup" && (e.ScheduledFor.IsZero() || k.At.Equal(e.ScheduledFor)):
			return k, true
		case e.Wakeup == runner.WakeupScheduled && k.Tool == "CronCreate" && (!ok || sooner(k, w)):
			w, ok = k, true
		}
	}
	return w, ok
}

// heading is the line a wake-up turn's answer starts with.
func heading(w runner.Wakeup, ok bool) string {
	if !ok {
		return "⏰ A wake-up Claude had set fired."
	}
	what := firstLine(w.Reason, w.Prompt)
	s := "⏰ Woken up by "
	switch {
	case w.Tool == "ScheduleWakeup":
		s += "the wake-up Claude set"
	case w.Recurring:
		s += "the recurring job Claude set" + when(w)
	default:
		s += "the job Claude set"
	}
	if what != "" {
		s += ": " + what
	}
	return s
}

// takeHeading heads a wake-up turn's answer, once.
func (m *Module) takeHeading(c *chat.Chat, _ runner.TurnCompleted) string {
	st := m.state.Get(c)
	h := st.firing
	st.firing = ""
	return h
}

// sooner reports whether cron job a is likelier than b to be the one that
// fired: a one-shot job before a recurring one, the earlier one first.
func sooner(a, b runner.Wakeup) bool {
	if a.Recurring != b.Recurring {
		return !a.Recurring
	}
	return !a.At.IsZero() && (b.At.IsZero() || a.At.Before(b.At))
}

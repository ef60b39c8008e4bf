package render

import (
	"strconv"
	"time"

	"github.com/untether/untether/internal/runner"
)

// scheduleText is how a ScheduleWakeup or CronCreate call reads, with its
// countdown at now: "⏰ wakes up in 10m: check the deploy",
// "⏰ At 09:00 (once): remind me · next in 4h59m". The countdown comes from
// the call's result when it has arrived (the CLI clamps delays), else from
// the requested delay.
func scheduleText(r *ToolRow, now time.Time) string {
	s := r.Schedule
	what := firstNonEmpty(oneLine(s.Reason), oneLine(s.Prompt))
	with := func(head string) string {
		if what != "" {
			return head + ": " + what
		}
		return head
	}
	switch {
	case s.Tool == "ScheduleWakeup" && s.Stop:
		return "⏰ ends the wake-up loop"
	case s.Tool == "ScheduleWakeup":
		at := r.FiresAt
		if at.IsZero() && s.Delay > 0 && !r.Started.IsZero() {
			at = r.Started.Add(s.Delay)
		}
		switch {
		case at.IsZero():
			return with("⏰ wakes up later")
		case at.After(now):
			return with("⏰ wakes up in " + formatCountdown(at.Sub(now)))
		}
		return with("⏰ wake-up was due " + formatClock(at, now))
	}
	when := firstNonEmpty(oneLine(r.ScheduleText), oneLine(s.Cron))
	if when == "" {
		when = "on a schedule"
	}
	if !s.Recurring {
		when += " (once)"
	}
	out := with("⏰ " + Truncate(when, 60))
	if !r.FiresAt.IsZero() && r.FiresAt.After(now) {
		out += " · next in " + formatCountdown(r.FiresAt.Sub(now))
	}
	return out
}

// formatCountdown is "45s", "10m", "9m59s" or "4h59m".
func formatCountdown(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second) // round up: "in 0s" would be wrong
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600 && s%60 == 0:
		return strconv.FormatInt(s/60, 10) + "m"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + pad2(s%60) + "s"
	}
	return strconv.FormatInt(s/3600, 10) + "h" + pad2(s%3600/60) + "m"
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// wakeupText says that a scheduler fire, not a message, started a turn.
func wakeupText(src runner.WakeupSource, setFor, now time.Time) string {
	if src == runner.WakeupLoop {
		s := "⏰ Claude woke up as it had scheduled"
		if !setFor.IsZero() {
			s += " (set for " + formatClock(setFor, now) + ")"
		}
		return s
	}
	return "⏰ A scheduled task started this turn"
}

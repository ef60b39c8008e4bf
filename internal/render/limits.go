package render

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

// maxLimits bounds the subscription windows a Turn tracks; the CLI reports
// two to five.
const maxLimits = 6

// limitSeverity orders rate-limit statuses; an unknown or missing status
// says nothing.
func limitSeverity(status string) int {
	switch status {
	case "allowed":
		return 1
	case "allowed_warning":
		return 2
	case "rejected":
		return 3
	}
	return 0
}

// applyRateLimit keeps the windows that currently warn or reject. Each
// window of unifiedWindows carries its own status, and a window can warn
// while the event's top-level status still says "allowed" (the real 91 %
// capture), so every window is looked at. The top-level status belongs to
// rateLimitType's window and wins there when it is worse.
func (t *Turn) applyRateLimit(e runner.RateLimit) bool {
	windows := append([]runner.LimitWindow(nil), e.Windows...)
	if e.WindowType != "" || len(windows) == 0 {
		top := runner.LimitWindow{Type: e.WindowType, Status: e.Status, Utilization: e.Utilization, ResetsAt: e.ResetsAt}
		i := -1
		for j, w := range windows {
			if w.Type == e.WindowType {
				i = j
			}
		}
		switch {
		case i < 0:
			windows = append(windows, top)
		case limitSeverity(e.Status) > limitSeverity(windows[i].Status):
			windows[i].Status = e.Status
			if windows[i].ResetsAt.IsZero() {
				windows[i].ResetsAt = e.ResetsAt
			}
		}
	}
	changed := false
	for _, w := range windows {
		changed = t.setLimit(w) || changed
	}
	return changed
}

// setLimit records a warning or rejection for w's window, or forgets the
// window when it is allowed again (the steady "allowed" trickle otherwise
// changes nothing).
func (t *Turn) setLimit(w runner.LimitWindow) bool {
	i := -1
	for j, l := range t.limits {
		if l.Type == w.Type {
			i = j
		}
	}
	switch sev := limitSeverity(w.Status); {
	case sev >= 2 && i >= 0:
		if t.limits[i] == w {
			return false
		}
		t.limits[i] = w
	case sev >= 2:
		if len(t.limits) == maxLimits {
			return false
		}
		t.limits = append(t.limits, w)
	case sev == 1 && i >= 0:
		t.limits = append(t.limits[:i], t.limits[i+1:]...)
	default:
		return false
	}
	return true
}

func rateLimitText(w runner.LimitWindow, now time.Time) string {
	window := windowName(w.Type)
	var s string
	if w.Status == "rejected" {
		s = "⛔ " + upperFirst(window) + " limit reached"
	} else {
		s = "⚠️ Approaching the " + window + " limit"
		if w.Utilization >= 0 {
			s += fmt.Sprintf(": %d%% used", int(math.Round(w.Utilization*100)))
		}
	}
	if !w.ResetsAt.IsZero() {
		s += ", resets " + formatClock(w.ResetsAt, now)
		if d := w.ResetsAt.Sub(now); d > 0 {
			s += " (in " + FormatElapsed(d) + ")"
		}
	}
	return s
}

// windowName turns "five_hour" into "5-hour".
func windowName(w string) string {
	switch w {
	case "":
		return "usage"
	case "five_hour":
		return "5-hour"
	case "seven_day":
		return "7-day"
	case "seven_day_opus":
		return "7-day Opus"
	case "seven_day_sonnet":
		return "7-day Sonnet"
	}
	return strings.ReplaceAll(oneLine(w), "_", " ")
}

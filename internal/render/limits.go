package render

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

func (t *Turn) applyRateLimit(e runner.RateLimit) bool {
	switch e.Status {
	case "allowed_warning", "rejected":
		t.rateLimit, t.hasRateLimit = e, true
		return true
	}
	// The steady "allowed" trickle only matters when it lifts an earlier
	// warning or rejection for the same window.
	if t.hasRateLimit && t.rateLimit.WindowType == e.WindowType {
		t.hasRateLimit = false
		return true
	}
	return false
}

func rateLimitText(r runner.RateLimit, now time.Time) string {
	window := windowName(r.WindowType)
	var s string
	if r.Status == "rejected" {
		s = "⛔ " + upperFirst(window) + " limit reached"
	} else {
		s = "⚠️ Approaching the " + window + " limit"
		if r.Utilization >= 0 {
			s += fmt.Sprintf(": %d%% used", int(math.Round(r.Utilization*100)))
		}
	}
	if !r.ResetsAt.IsZero() {
		s += ", resets " + formatClock(r.ResetsAt, now)
		if d := r.ResetsAt.Sub(now); d > 0 {
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

package render

import (
	"strings"
	"time"
)

// StallNote is the line a progress message shows once a running turn has
// printed nothing for a while, naming what runs so the user can judge
// whether to wait: "⏳ no output for 6m · Bash npm test running". With no
// tool running, the turn waits on the model.
func StallNote(t *Turn, idle time.Duration) string {
	what := "waiting for the model"
	rows := t.Rows()
	for i := len(rows) - 1; i >= 0; i-- {
		if r := rows[i]; r.Status == ToolRunning {
			what = strings.TrimSpace(Truncate(r.Name+" "+oneLine(r.Summary), rowNameMax+rowSummaryMax)) + " running"
			break
		}
	}
	return "⏳ no output for " + formatIdle(idle) + " · " + what
}

// formatIdle rounds down to what a person reads at a glance: "45s", "6m",
// "2h10m".
func formatIdle(d time.Duration) string {
	if d < time.Minute {
		return d.Truncate(time.Second).String()
	}
	s := d.Truncate(time.Minute).String() // "6m0s", "2h10m0s", "2h0m0s"
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

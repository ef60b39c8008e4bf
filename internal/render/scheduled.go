package render

import (
	"strconv"
	"time"
)

// ScheduledPrompt is one schedule as /schedules lists it.
type ScheduledPrompt struct {
	ID   int64
	Cron string // "" for a one-off
	// Zone is the zone Cron is read in, named when it is not the user's.
	Zone         string
	Prompt       string
	NextRun      time.Time // in the user's zone
	FromConfig   bool
	FreshSession bool
	// Project is where each run works; "" wherever the chat works then.
	Project string
	// DeleteData is the 🗑 button's callback data; empty for none (the
	// config file's schedules are removed there).
	DeleteData string
}

// SchedulesReport is what /schedules shows.
type SchedulesReport struct {
	Now     time.Time
	Zone    string
	Items   []ScheduledPrompt
	Paused  bool
	Max     int // how many schedules a chat may make
	Made    int // how many of Items the chat made
	CatchUp bool
}

// Layout limits of /schedules.
const (
	schedulePromptMax = 120
	scheduleButtons   = 3 // per row
)

// RenderSchedules renders /schedules: each schedule with its next run, and
// one 🗑 Delete button per schedule the chat made.
func RenderSchedules(r SchedulesReport) (string, Keyboard) {
	var w htmlText
	w.text("⏰ ")
	w.raw("<b>")
	w.text("Scheduled prompts")
	w.raw("</b>")
	if r.Zone != "" {
		w.text(" (times in " + r.Zone + ")")
	}
	if r.Paused {
		w.text("\n⏸ Paused for every chat: nothing runs until someone sends /schedules resume.")
	}
	var kb Keyboard
	if len(r.Items) == 0 {
		w.text("\nNone in this chat. Make one with /at 30m PROMPT, /at 09:00 PROMPT, /at tomorrow 09:00 PROMPT, " +
			"or /every \"0 9 * * 1-5\" PROMPT.")
		return string(w.b), kb
	}
	for _, it := range r.Items {
		w.text("\n\n#" + strconv.FormatInt(it.ID, 10) + " ")
		w.raw("<b>")
		w.text(ScheduleWhen(it.Cron, it.Zone))
		w.raw("</b>")
		if it.FromConfig {
			w.text(" (config file)")
		}
		if it.Project != "" {
			w.text(" · in project " + it.Project)
		}
		if it.FreshSession {
			w.text(" · fresh session")
		}
		w.text("\nnext: " + FormatUntil(it.NextRun, r.Now))
		w.raw("\n<i>")
		w.text(Truncate(oneLine(it.Prompt), schedulePromptMax))
		w.raw("</i>")
		if it.DeleteData != "" {
			if len(kb.Rows) == 0 || len(kb.Rows[len(kb.Rows)-1]) == scheduleButtons {
				kb.Rows = append(kb.Rows, nil)
			}
			row := &kb.Rows[len(kb.Rows)-1]
			*row = append(*row, Button{Text: "🗑 Delete #" + strconv.FormatInt(it.ID, 10), CallbackData: it.DeleteData})
		}
	}
	w.text("\n\nThis chat made " + strconv.Itoa(r.Made) + " of the " + strconv.Itoa(r.Max) + " it may have.")
	if r.CatchUp {
		w.text(" A run missed while untether was down runs once when it is back.")
	} else {
		w.text(" Runs missed while untether was down are skipped.")
	}
	w.text(" /schedules pause stops them all.")
	return string(w.b), kb
}

// ScheduleWhen names a schedule's timing: "once", "cron 0 9 * * 1-5" or
// "cron @daily (America/New_York)".
func ScheduleWhen(cron, zone string) string {
	if cron == "" {
		return "once"
	}
	s := "cron " + oneLine(cron)
	if zone != "" {
		s += " (" + zone + ")"
	}
	return s
}

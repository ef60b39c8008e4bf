package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StatusInfo is what /status shows about a chat's session.
type StatusInfo struct {
	SessionID string
	Model     string
	// Effort is the chat's effort level (/effort), shown when set.
	Effort string
	Mode   string
	// Login says whether and how the CLI is logged in (`claude auth
	// status`), shown when set.
	Login            string
	ContextPercent   float64
	CostUSD          float64 // the session's cost so far
	Turns            int
	ProcessState     string // e.g. "running", "idle", "stopped"
	PendingApprovals int
	// Pending lists the requests waiting for the user, oldest first.
	Pending []PendingItem
	// Project is where the session runs ("api", "api · feature"); shown
	// when set.
	Project    string
	Workdir    string
	LastActive time.Time
	Now        time.Time
	// BackgroundTasks and Wakeups are what the live CLI waits for between
	// turns (it starts a turn by itself when they come): Wakeups are one
	// line each, plain text.
	BackgroundTasks int
	Wakeups         []string
	// ResumeLine is the command that goes on with the session at a
	// terminal, shown last and whole (see FinalMeta.ResumeLine).
	ResumeLine string
}

// PendingItem is one request waiting for the user, as /status lists it.
type PendingItem struct {
	Tool    string // the tool's display name
	Summary string // what it would do
	Since   time.Time
}

// pendingListMax is how many pending requests /status lists by name.
const pendingListMax = 10

// CommandHelp is one line of /help.
type CommandHelp struct {
	Command     string // with or without the leading slash
	Description string
}

// Layout limits of the status and help messages, in UTF-16 units.
const (
	statusFieldMax = 200
	helpLineMax    = 300
)

// RenderStatus renders /status: one labelled line per field, "—" for
// what is not known yet.
func RenderStatus(s StatusInfo) string {
	var w htmlText
	w.text("📊 ")
	w.raw("<b>")
	w.text("Session status")
	w.raw("</b>")

	field := func(label, value string, code bool) {
		w.raw("\n")
		w.n++
		w.text(label + ": ")
		if label == "Workdir" {
			// The end of a path says more than its start.
			value = truncateFront(oneLine(value), statusFieldMax, false)
		} else {
			value = Truncate(oneLine(value), statusFieldMax)
		}
		if value == "" {
			w.text("—")
			return
		}
		if code {
			w.raw("<code>")
		}
		w.text(value)
		if code {
			w.raw("</code>")
		}
	}
	session := s.SessionID
	if session == "" {
		field("Session", "none yet", false)
	} else {
		field("Session", session, true)
	}
	field("Model", s.Model, false)
	if s.Effort != "" {
		field("Effort", s.Effort, false)
	}
	field("Mode", s.Mode, false)
	if s.Login != "" {
		field("Login", s.Login, false)
	}
	ctx := formatContext(s.ContextPercent)
	if ctx != "" {
		ctx += " used"
	}
	field("Context", ctx, false)
	cost := ""
	if s.CostUSD > 0 || s.Turns > 0 {
		cost = formatCost(s.CostUSD) + " over " + plural(s.Turns, "turn", "turns")
	}
	field("Cost", cost, false)
	process := s.ProcessState
	if s.BackgroundTasks > 0 {
		process += fmt.Sprintf(" (%s running in the background)", plural(s.BackgroundTasks, "task", "tasks"))
	}
	field("Process", process, false)
	for i, line := range s.Wakeups {
		if i == pendingListMax {
			w.text("\n  … " + plural(len(s.Wakeups)-i, "more", "more"))
			break
		}
		w.text("\n  ⏰ " + Truncate(oneLine(line), 160))
	}
	if n := max(s.PendingApprovals, len(s.Pending)); n > 0 {
		field("Pending approvals", strconv.Itoa(n), false)
	}
	for i, p := range s.Pending {
		if i == pendingListMax {
			w.text("\n  … " + plural(len(s.Pending)-i, "more", "more"))
			break
		}
		w.text("\n  • " + Truncate(oneLine(p.Tool), 40))
		if sum := oneLine(p.Summary); sum != "" {
			w.text(": " + Truncate(sum, 100))
		}
		if !p.Since.IsZero() && !s.Now.Before(p.Since) {
			w.text(" · waiting " + FormatElapsed(s.Now.Sub(p.Since)))
		}
	}
	if s.Project != "" {
		field("Project", s.Project, false)
	}
	field("Workdir", s.Workdir, true)
	last := "never"
	if !s.LastActive.IsZero() {
		last = formatClock(s.LastActive, s.Now)
		if !s.Now.IsZero() && !s.Now.Before(s.LastActive) {
			last = FormatElapsed(s.Now.Sub(s.LastActive)) + " ago (" + last + ")"
		}
	}
	field("Last active", last, false)
	if line := wholeLine(s.ResumeLine); line != "" {
		w.raw("\n")
		w.n++
		w.text("💻 At a terminal: ")
		w.raw("<code>")
		w.text(line)
		w.raw("</code>")
	}
	return string(w.b)
}

// RenderHelp renders /help: one line per command, as many as fit in one
// message.
func RenderHelp(commands []CommandHelp) string {
	var w htmlText
	w.raw("<b>")
	w.text("Commands")
	w.raw("</b>")
	for i, c := range commands {
		var line htmlText
		line.raw("\n")
		line.n++
		cmd := oneLine(c.Command)
		if cmd != "" && !strings.HasPrefix(cmd, "/") {
			cmd = "/" + cmd
		}
		line.text(Truncate(cmd, 40))
		if d := oneLine(c.Description); d != "" {
			line.text(" — " + d)
		}
		if line.n > helpLineMax {
			line = htmlText{}
			line.raw("\n")
			line.text(Truncate(cmd+" — "+oneLine(c.Description), helpLineMax))
			line.n++
		}
		// Leave room for the line saying how many were left out.
		if w.n+line.n > SafeChunkLimit-40 {
			var more htmlText
			more.raw("\n")
			more.text("… and " + plural(len(commands)-i, "more command", "more commands"))
			w.b = append(w.b, more.b...)
			break
		}
		w.b = append(w.b, line.b...)
		w.n += line.n
	}
	return string(w.b)
}

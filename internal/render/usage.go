package render

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// UsageTotals is what some turns cost and used.
type UsageTotals struct {
	CostUSD      float64
	Turns        int
	InputTokens  int64 // every input-side token: fresh, cache reads and cache writes
	OutputTokens int64
}

// Add counts one more turn.
func (u *UsageTotals) Add(cost float64, in, out int64) {
	u.CostUSD += cost
	u.Turns++
	u.InputTokens += in
	u.OutputTokens += out
}

// UsagePeriod is one period of /usage: the total and each chat's share.
type UsagePeriod struct {
	Title string // "Today", "Last 7 days", "This month"
	Total UsageTotals
	// Chats are the chats and topics with turns in the period, most
	// expensive first; Label names one ("this chat", "chat 42 · topic 7").
	Chats []UsageChat
}

// UsageChat is one chat's or topic's share of a period.
type UsageChat struct {
	Label string
	UsageTotals
}

// UsageDay is one bar of the daily chart.
type UsageDay struct {
	Day     time.Time // midnight, in the user's zone
	CostUSD float64
	Turns   int
}

// UsageWindow is the last known state of a subscription window.
type UsageWindow struct {
	Type        string // five_hour, seven_day, ...
	Status      string
	Utilization float64 // 0..1, negative when unknown
	ResetsAt    time.Time
}

// UsageReport is everything /usage shows. Times are in the user's zone.
type UsageReport struct {
	Now     time.Time
	Zone    string // the zone's name, said once
	Periods []UsagePeriod
	Days    []UsageDay // oldest first
	Windows []UsageWindow
	// WindowsAt is when the windows were last reported.
	WindowsAt time.Time
}

// Layout limits of /usage.
const (
	usageChatsShown = 5
	usageLabelMax   = 40
	usageBarWidth   = 12 // in full blocks
	// WindowWarnAt is the utilization from which a window is worth a line
	// under answers.
	WindowWarnAt = 0.7
)

// RenderUsage renders /usage: per period the cost, turns and tokens in
// total and per chat, a text bar chart of the last days' cost, and the
// subscription windows (or why there are none).
func RenderUsage(r UsageReport) string {
	var w htmlText
	w.text("📊 ")
	w.raw("<b>")
	w.text("Usage")
	w.raw("</b>")
	if r.Zone != "" {
		w.text(" (days in " + r.Zone + ")")
	}
	for _, p := range r.Periods {
		w.raw("\n\n<b>")
		w.text(p.Title)
		w.raw("</b>")
		w.text(" · " + totalsText(p.Total))
		for i, c := range p.Chats {
			if i == usageChatsShown {
				w.text("\n  +" + plural(len(p.Chats)-i, "more chat", "more chats"))
				break
			}
			w.text("\n  " + Truncate(oneLine(c.Label), usageLabelMax) + ": " + totalsText(c.UsageTotals))
		}
	}
	if len(r.Days) > 0 {
		w.raw("\n\n<b>")
		w.text("Cost per day")
		w.raw("</b>\n<pre>")
		w.text(dayChart(r.Days))
		w.raw("</pre>")
	}
	w.raw("\n\n<b>")
	w.text("Subscription limits")
	w.raw("</b>")
	if len(r.Windows) == 0 {
		w.text("\nNone known yet. Claude Code reports them only when it is logged in with a subscription (not an API key), " +
			"after a turn; with an API key there are none (/budget shows the operator's spending caps).")
		return string(w.b)
	}
	for _, win := range r.Windows {
		w.text("\n" + windowLine(win, r.Now))
	}
	if !r.WindowsAt.IsZero() {
		w.text("\n(as reported " + FormatWhen(r.WindowsAt, r.Now) + ")")
	}
	return string(w.b)
}

// totalsText is "$0.0123 · 3 turns · 12.3k in / 456 out", or "nothing".
func totalsText(u UsageTotals) string {
	if u.Turns == 0 {
		return "nothing"
	}
	return formatCost(u.CostUSD) + " · " + plural(u.Turns, "turn", "turns") + " · " +
		formatTokens(u.InputTokens) + " in / " + formatTokens(u.OutputTokens) + " out"
}

// dayChart is one line per day: "Mon 17 ████▌        $0.12 · 3".
func dayChart(days []UsageDay) string {
	top := 0.0
	for _, d := range days {
		top = math.Max(top, d.CostUSD)
	}
	var b strings.Builder
	for i, d := range days {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Day.Format("Mon 02 "))
		bar := ""
		if top > 0 {
			bar = blocks(d.CostUSD / top * usageBarWidth)
		}
		b.WriteString(bar)
		b.WriteString(strings.Repeat(" ", usageBarWidth-len([]rune(bar))+1))
		b.WriteString(formatCost(d.CostUSD))
		if d.Turns > 0 {
			b.WriteString(" · " + strconv.Itoa(d.Turns))
		}
	}
	return b.String()
}

// blocks draws x (0..usageBarWidth) full blocks with eighths; any cost
// above zero shows at least a sliver.
func blocks(x float64) string {
	eighths := int(math.Round(x * 8))
	if eighths == 0 && x > 0 {
		eighths = 1
	}
	partial := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	return strings.Repeat("█", eighths/8) + partial[eighths%8]
}

// windowLine is "5-hour: 75 % used · resets 14:00 CET (in 2h13m)".
func windowLine(w UsageWindow, now time.Time) string {
	s := upperFirst(windowName(w.Type)) + ":"
	if w.Utilization >= 0 {
		s += " " + strconv.Itoa(int(math.Round(w.Utilization*100))) + " % used"
	}
	switch w.Status {
	case "allowed_warning":
		s += " ⚠️"
	case "rejected":
		s += " ⛔ limit reached"
	}
	if !w.ResetsAt.IsZero() {
		s += " · resets " + FormatUntil(w.ResetsAt.In(now.Location()), now)
	}
	return s
}

// WindowWarning is the one line an answer carries when a subscription
// window is at WindowWarnAt or more: "📊 5-hour limit 82 % used, resets
// 14:00 CET (in 2h13m)", several windows joined by "; ". "" when none is.
func WindowWarning(ws []UsageWindow, now time.Time) string {
	var parts []string
	for _, w := range ws {
		if w.Utilization < WindowWarnAt || (!w.ResetsAt.IsZero() && !w.ResetsAt.After(now)) {
			continue
		}
		p := windowName(w.Type) + " limit " + strconv.Itoa(int(math.Round(w.Utilization*100))) + " % used"
		if !w.ResetsAt.IsZero() {
			p += ", resets " + FormatUntil(w.ResetsAt.In(now.Location()), now)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "📊 " + upperFirst(strings.Join(parts, "; "))
}

package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

// ProgressOptions control [RenderProgress].
type ProgressOptions struct {
	// MaxRows is how many of the latest tool rows to show; 0 means 8. It is
	// capped at 64, the number of rows a Turn keeps.
	MaxRows int
	// Verbose adds the thinking excerpt and the error text of failed tools.
	Verbose bool
	// Now is the render time, for the elapsed clock and countdowns; zero
	// means the time of the turn's latest event.
	Now time.Time
	// CancelData is the callback data of the Cancel button shown while the
	// turn runs; empty means no button. It must be at most 64 bytes.
	CancelData string
	// Stall, when set, is shown above the other notes: the turn has printed
	// nothing for a while (see StallNote).
	Stall string
	// Notes are plain-text lines the caller adds to the notes, after Stall
	// (e.g. "⏰ scheduled").
	Notes []string
	// HideText leaves the streamed answer out, for a chat where it is shown
	// as a draft instead ([RenderDraft]); the message keeps the tool rows.
	HideText bool
}

// Layout limits of the progress message, in UTF-16 units.
const (
	defaultProgressRows = 8
	rowNameMax          = 40
	rowSummaryMax       = 80
	rowErrorMax         = 160
	noteMax             = 200
	notesTotalMax       = 1800
	footerModelMax      = 40
	maxTaskLines        = 3
	// longRunning is how long a tool runs before its row shows its own
	// elapsed time, so a long build visibly ticks (Untether's heartbeat tail).
	longRunning = 60 * time.Second
)

// RenderProgress renders the in-place progress message of a turn: a header
// with the phase, elapsed time and step count; the latest tool rows; notes
// (retries, rate limits, compaction, notices, background tasks, queued
// messages); the tail of the streamed answer; and a footer with model, mode,
// context use and cost. The keyboard holds a Cancel button while the turn
// runs and is empty once it has finished, which removes the button.
//
// The HTML is always valid for Telegram and its visible length never exceeds
// [SafeChunkLimit]: the streamed tail and then the rows give way to fit.
func RenderProgress(t *Turn, o ProgressOptions) (string, Keyboard) {
	now := o.Now
	if now.IsZero() {
		now = t.LastEventAt
	}
	phase := t.Phase()

	var header htmlText
	t.writeHeader(&header, phase, now)

	var notes htmlText
	if o.Stall != "" {
		notes.text(Truncate(o.Stall, noteMax))
	}
	for _, n := range append(o.Notes[:len(o.Notes):len(o.Notes)], t.notes(now)...) {
		n = Truncate(n, noteMax)
		if notes.n+UTF16Len(n)+1 > notesTotalMax {
			break
		}
		if notes.n > 0 {
			notes.raw("\n")
			notes.n++
		}
		notes.text(n)
	}

	var thinking htmlText
	if o.Verbose && len(t.thinking.b) > 0 {
		thinking.text("💭 ")
		thinking.raw("<i>")
		thinking.text(truncateFront(oneLine(t.thinking.String()), maxThinkingTail, t.thinking.cut))
		thinking.raw("</i>")
	}

	var footer htmlText
	t.writeFooter(&footer)

	// Everything but the rows and the streamed tail is bounded by
	// construction; those two share what is left, the rows getting at least
	// half of it.
	const sep = 2 // a blank line between sections
	remaining := SafeChunkLimit - header.n - sectionLen(notes.n, sep) - sectionLen(thinking.n, sep) - sectionLen(footer.n, sep)
	tail := ""
	if !o.HideText {
		tail = t.text.String()
	}
	tailWant := 0
	if strings.TrimSpace(tail) != "" {
		tailWant = min(UTF16Len(tail), maxTextTail) + sep
	}
	rows := t.writeRows(o, phase, now, remaining-min(tailWant, remaining/2))
	remaining -= sectionLen(rows.n, sep)

	var text htmlText
	if tailWant > 0 && remaining > sep+1 {
		text.raw("<blockquote>")
		text.text(truncateFront(tail, min(maxTextTail, remaining-sep), t.text.cut))
		text.raw("</blockquote>")
	}

	var b strings.Builder
	b.Grow(len(header.b) + len(rows.b) + len(notes.b) + len(thinking.b) + len(text.b) + len(footer.b) + 8)
	b.Write(header.b)
	for _, s := range []*htmlText{&rows, &notes, &thinking, &text, &footer} {
		if s.n > 0 {
			b.WriteString("\n\n")
			b.Write(s.b)
		}
	}

	var kb Keyboard
	if !phase.Finished() && o.CancelData != "" {
		kb.Rows = [][]Button{{{Text: "⏹ Cancel", CallbackData: o.CancelData}}}
	}
	return b.String(), kb
}

// RenderProgressFinal is the compact form the progress message is edited to
// once the answer has been sent, e.g. "✅ Done · 12 steps · 1m05s".
func RenderProgressFinal(t *Turn, o ProgressOptions) string {
	now := o.Now
	if now.IsZero() {
		now = t.LastEventAt
	}
	var w htmlText
	icon, label := t.phaseLabel(t.Phase())
	w.text(icon + " ")
	w.raw("<b>")
	w.text(label)
	w.raw("</b>")
	if t.Steps > 0 {
		w.text(" · " + plural(t.Steps, "step", "steps"))
	}
	w.text(" · " + FormatElapsed(t.elapsed(now)))
	if t.Result != nil && t.Result.CostUSD > 0 {
		w.text(" · " + formatCost(t.Result.CostUSD))
	}
	return string(w.b)
}

func sectionLen(n, sep int) int {
	if n == 0 {
		return 0
	}
	return n + sep
}

// elapsed is the turn's wall-clock time: to now while it runs, to its end
// once finished.
func (t *Turn) elapsed(now time.Time) time.Duration {
	end := now
	if !t.FinishedAt.IsZero() && (t.Result != nil || t.Exit != nil) {
		end = t.FinishedAt
	}
	if t.StartedAt.IsZero() || end.Before(t.StartedAt) {
		return 0
	}
	return end.Sub(t.StartedAt)
}

func (t *Turn) writeHeader(w *htmlText, phase Phase, now time.Time) {
	icon, label := t.phaseLabel(phase)
	w.text(icon + " ")
	w.raw("<b>")
	w.text(label)
	w.raw("</b>")
	w.text(" · " + FormatElapsed(t.elapsed(now)))
	if t.Steps > 0 {
		w.text(" · " + plural(t.Steps, "step", "steps"))
	}
	if p := Truncate(oneLine(t.Project), footerModelMax); p != "" {
		w.text(" · 📁 " + p)
	}
}

func (t *Turn) writeFooter(w *htmlText) {
	parts := make([]string, 0, 4)
	if t.Model != "" {
		parts = append(parts, Truncate(oneLine(t.Model), footerModelMax))
	}
	if t.Mode != "" {
		parts = append(parts, Truncate(oneLine(string(t.Mode)), footerModelMax))
	}
	if r := t.Result; r != nil {
		if c := formatContext(r.ContextPercent); c != "" {
			parts = append(parts, "ctx "+c)
		}
		if r.CostUSD > 0 {
			parts = append(parts, formatCost(r.CostUSD))
		}
	}
	if len(parts) == 0 {
		return
	}
	w.raw("<i>")
	w.text(strings.Join(parts, " · "))
	w.raw("</i>")
}

// writeRows writes the latest rows that fit in budget, newest kept first,
// with a line counting the steps left out.
func (t *Turn) writeRows(o ProgressOptions, phase Phase, now time.Time, budget int) htmlText {
	maxRows := o.MaxRows
	if maxRows <= 0 {
		maxRows = defaultProgressRows
	}
	maxRows = min(maxRows, maxKeptRows, t.rowLen)
	// Reserve room for the "earlier steps" line, which may be needed even
	// when every wanted row fits.
	const earlierMax = 40
	budget -= earlierMax

	var lines [maxKeptRows]htmlText
	shown, used := 0, 0
	for shown < maxRows {
		r := t.row(t.rowLen - 1 - shown)
		var line htmlText
		writeRow(&line, r, o.Verbose, phase.Finished(), now)
		if used+line.n+1 > budget {
			break
		}
		used += line.n + 1
		lines[maxRows-1-shown] = line
		shown++
	}

	var w htmlText
	if hidden := t.Steps - shown; hidden > 0 {
		w.raw("<i>")
		if shown == 0 {
			w.text(plural(hidden, "step", "steps"))
		} else {
			w.text("… and " + plural(hidden, "earlier step", "earlier steps"))
		}
		w.raw("</i>")
	}
	for _, line := range lines[maxRows-shown : maxRows] {
		if w.n > 0 {
			w.raw("\n")
			w.n++
		}
		w.b = append(w.b, line.b...)
		w.n += line.n
	}
	return w
}

func writeRow(w *htmlText, r *ToolRow, verbose, finished bool, now time.Time) {
	indent := ""
	if r.Depth > 0 {
		indent = strings.Repeat("   ", min(r.Depth, 3)-1) + "   ↳ "
	}
	glyph := "▸"
	switch {
	case r.Status == ToolDone:
		glyph = "✓"
	case r.Status == ToolFailed:
		glyph = "✗"
	case finished:
		glyph = "·" // never finished: the turn ended around it
	}
	w.text(indent + glyph + " ")
	switch {
	case r.Schedule != nil:
		// A wake-up reads as what it arranges, with its countdown.
		w.text(Truncate(scheduleText(r, now), rowSummaryMax+rowNameMax))
	default:
		w.raw("<b>")
		w.text(Truncate(oneLine(r.Name), rowNameMax))
		w.raw("</b>")
		if s := Truncate(oneLine(r.Summary), rowSummaryMax); s != "" {
			w.text(" ")
			w.raw("<code>")
			w.text(s)
			w.raw("</code>")
		}
	}
	if r.Why != "" {
		w.text(" · " + r.Why)
	}
	if r.Status == ToolRunning && !finished && !r.Started.IsZero() {
		if d := now.Sub(r.Started); d >= longRunning {
			w.text(" · " + FormatElapsed(d))
		}
	}
	if verbose && r.Status == ToolFailed && strings.TrimSpace(r.Error) != "" {
		w.text("\n" + indent + "   → ")
		w.raw("<i>")
		w.text(Truncate(oneLine(r.Error), rowErrorMax))
		w.raw("</i>")
	}
}

// notes returns the plain-text note lines, most urgent first.
func (t *Turn) notes(now time.Time) []string {
	var out []string
	if x := t.Exit; x != nil {
		if x.Requested {
			out = append(out, "⏹ Claude was stopped.")
		} else {
			out = append(out, "💥 Claude stopped unexpectedly ("+exitText(*x)+"); your next message resumes the session.")
		}
	}
	if t.sessNote != "" {
		out = append(out, "ℹ️ "+t.sessNote)
	}
	switch n := len(t.pending); {
	case n == 1:
		out = append(out, "✋ Waiting for your approval: "+t.pending[0].Tool)
	case n > 1:
		tools := make([]string, n)
		for i, p := range t.pending {
			tools[i] = p.Tool
		}
		out = append(out, fmt.Sprintf("✋ %d approvals waiting: %s", n, strings.Join(tools, ", ")))
	}
	if t.wakeup != "" {
		out = append(out, wakeupText(t.wakeup, t.wakeupFor, now))
	}
	if t.retrying {
		out = append(out, "🔁 API retry: "+retryText(t.retry))
	}
	for _, w := range t.limits {
		out = append(out, rateLimitText(w, now))
	}
	if s := t.compactionText(); s != "" {
		out = append(out, s)
	}
	for _, n := range t.notices {
		out = append(out, noticeText(n))
	}
	if t.denials > 0 {
		d := t.lastDenial
		s := "🚫 " + d.Tool + " was " + deniedWhy(d.Reason, t.Mode)
		if d.Reason == "" && strings.TrimSpace(d.Message) != "" {
			s = "🚫 " + d.Tool + " was denied: " + oneLine(d.Message) // an older CLI's only explanation
		}
		if t.denials > 1 {
			s += fmt.Sprintf(" (%d denials)", t.denials)
		}
		out = append(out, s)
	}
	out = append(out, t.taskNotes()...)
	if n := len(t.queued); n > 0 {
		out = append(out, "📨 "+plural(n, "message", "messages")+" queued")
	}
	return out
}

// compactionText is the state of the latest compaction, "" if none ran.
func (t *Turn) compactionText() string {
	switch t.compaction {
	case compactionRunning:
		return "🗜 Compacting the conversation…"
	case compactionDone:
		s := "🗜 Conversation compacted"
		if t.compactTrig == "auto" {
			s += " automatically"
		}
		if t.compactPre > 0 {
			s += ": " + formatTokens(t.compactPre) + " → " + formatTokens(t.compactPost) + " tokens"
		}
		return s
	case compactionFailed:
		s := "⚠️ Compaction failed"
		if t.compactErr != "" {
			s += ": " + oneLine(t.compactErr)
		}
		return s
	}
	return ""
}

// retryText is "attempt 2/10, retrying in 1.1s (529 overloaded)".
func retryText(r runner.APIRetry) string {
	var b strings.Builder
	if r.Attempt > 0 {
		b.WriteString("attempt " + strconv.Itoa(r.Attempt))
		if r.MaxRetries > 0 {
			b.WriteString("/" + strconv.Itoa(r.MaxRetries))
		}
		b.WriteString(", ")
	}
	b.WriteString("retrying in " + formatDelay(r.Delay))
	b.WriteString(" (" + retryStatus(r) + ")")
	return b.String()
}

// retryStatus is what failed: "529 overloaded", "connection error".
func retryStatus(r runner.APIRetry) string {
	status := oneLine(r.Error)
	switch {
	case r.Status != 0 && status != "":
		return strconv.Itoa(r.Status) + " " + status
	case r.Status != 0:
		return strconv.Itoa(r.Status)
	case status == "" || status == "unknown":
		return "connection error"
	}
	return status
}

func noticeText(n runner.Notice) string {
	text := oneLine(n.Text)
	with := func(s string) string {
		if text != "" {
			return s + ": " + text
		}
		return s
	}
	switch n.Kind {
	case runner.NoticeSafeguard:
		s := "🛡 Safeguards stopped a response"
		if n.Category != "" {
			s += " (" + oneLine(n.Category) + ")"
		}
		return with(s)
	case runner.NoticeRefusalFallback:
		s := "↪️ Retrying after a refusal"
		if n.FallbackModel != "" {
			s += " on " + oneLine(n.FallbackModel)
		}
		return with(s)
	case runner.NoticeRefusalNoFallback:
		s := "🛡 Refused"
		if n.OriginalModel != "" {
			s += " by " + oneLine(n.OriginalModel)
		}
		return with(s + "; no fallback model")
	case runner.NoticeModelFallback:
		s := "↪️ Model fallback"
		if n.OriginalModel != "" && n.FallbackModel != "" {
			s += " " + oneLine(n.OriginalModel) + " → " + oneLine(n.FallbackModel)
		}
		return with(s)
	}
	if text == "" {
		text = "(empty notice)"
	}
	return "ℹ️ " + text
}

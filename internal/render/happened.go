package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

// Layout limits of the "what happened" block of a final answer.
const (
	maxHappenedDenials = 3
	maxHappenedTasks   = 3
	maxHappenedWakeups = 3
)

// Happened is what a turn went through besides its answer: API retries,
// rate-limit warnings, safeguard stops and fallbacks, compaction, refused
// tool calls, background work still running and wake-ups Claude scheduled.
// The progress message shows these while they happen, but it appears only
// after a moment and is edited down to one line at the end, so a quick turn
// would never show them and a long one would lose them: [RenderFinal]
// prints them above the answer's footer. Take it with [Turn.Happened] once
// the turn's result has been applied; the zero value says nothing happened.
type Happened struct {
	at         time.Time // when the turn ended, for countdowns
	wakeup     runner.WakeupSource
	wakeupFor  time.Time
	retries    int
	lastRetry  runner.APIRetry
	limits     []runner.LimitWindow
	notices    []runner.Notice
	model      string // the model that wrote the answer
	compaction string // the compaction line, "" if none ran
	compacted  bool   // a compaction finished: pre → post tokens are known
	compactPre int64
	compactPst int64
	why        map[runner.ToolUseID]string // why refused tool calls were refused
	running    []string                    // background tasks still running
	wakeups    []string                    // wake-ups Claude scheduled in this turn
	links      []runner.ResourceLink       // resources MCP tools returned by reference
}

// Links are the resources the turn's MCP tools returned by reference.
func (h Happened) Links() []runner.ResourceLink { return h.links }

// Happened returns what the turn went through, for [FinalMeta]. It copies
// what it needs, so the Turn may be reused afterwards.
func (t *Turn) Happened() Happened {
	at := t.FinishedAt
	if at.IsZero() {
		at = t.LastEventAt
	}
	h := Happened{
		at: at, wakeup: t.wakeup, wakeupFor: t.wakeupFor,
		retries: t.retries, lastRetry: t.retry,
		limits:  append([]runner.LimitWindow(nil), t.limits...),
		notices: append([]runner.Notice(nil), t.notices...),
		model:   t.Model,
		links:   append([]runner.ResourceLink(nil), t.links...),
	}
	if t.compaction != compactionRunning {
		h.compaction = t.compactionText()
	}
	if t.compaction == compactionDone && t.compactPre > 0 {
		h.compacted, h.compactPre, h.compactPst = true, t.compactPre, t.compactPost
	}
	for i := range t.rowLen {
		r := t.row(i)
		if r.Why != "" && r.Status != ToolDone {
			if h.why == nil {
				h.why = make(map[runner.ToolUseID]string)
			}
			h.why[r.ID] = r.Why
		}
		if r.Schedule != nil && r.Status == ToolDone && r.Depth == 0 {
			h.wakeups = append(h.wakeups, scheduleText(r, at))
		}
	}
	for _, s := range t.tasks {
		if !s.finished() {
			h.running = append(h.running, firstNonEmpty(oneLine(s.Description), s.ID))
		}
	}
	return h
}

// happenedLines are the plain-text lines of the "what happened" block.
// A manual /compact's own answer already says what the compaction did.
func happenedLines(tc runner.TurnCompleted, h Happened, compactInBody bool) []string {
	var out []string
	if h.wakeup != "" {
		out = append(out, wakeupText(h.wakeup, h.wakeupFor, h.at))
	}
	if h.retries > 0 {
		out = append(out, "🔁 "+plural(h.retries, "API retry", "API retries")+" (last error: "+retryStatus(h.lastRetry)+")")
	}
	for _, w := range h.limits {
		out = append(out, rateLimitText(w, h.at))
	}
	out = append(out, safeguardLines(tc, h)...)
	if h.compaction != "" && !compactInBody {
		out = append(out, h.compaction)
	}
	out = append(out, denialLines(tc.Denials, h.why)...)
	if n := len(h.running); n > 0 {
		shown := h.running[:min(n, maxHappenedTasks)]
		s := "🧵 Still running in the background: " + strings.Join(shown, "; ")
		if n > len(shown) {
			s += " (+" + strconv.Itoa(n-len(shown)) + " more)"
		}
		out = append(out, s)
	}
	out = append(out, linkLines(h.links)...) // links.go
	for i, w := range h.wakeups {
		if i == maxHappenedWakeups {
			out = append(out, "⏰ +"+plural(len(h.wakeups)-i, "more wake-up", "more wake-ups"))
			break
		}
		out = append(out, w)
	}
	return out
}

// safeguardLines report safeguard stops and fallbacks, naming the model
// that wrote the answer.
func safeguardLines(tc runner.TurnCompleted, h Happened) []string {
	var out []string
	answeredBy := firstNonEmpty(tc.Model, h.model)
	stopped := false
	for _, n := range h.notices {
		stopped = stopped || n.Kind == runner.NoticeSafeguard
	}
	if tc.SafetyStops > 0 || stopped {
		s := "🛡 Safeguards stopped a response"
		if tc.SafetyStops > 1 {
			s = "🛡 Safeguards stopped " + strconv.Itoa(tc.SafetyStops) + " responses"
		}
		if tc.OK && answeredBy != "" {
			s += "; the answer is from " + oneLine(answeredBy)
		}
		out = append(out, s)
	}
	for _, n := range h.notices {
		switch n.Kind {
		case runner.NoticeRefusalFallback:
			out = append(out, "↪️ After a refusal, "+firstNonEmpty(oneLine(n.FallbackModel), "another model")+
				" answered instead of "+firstNonEmpty(oneLine(n.OriginalModel), "the session's model"))
		case runner.NoticeRefusalNoFallback:
			out = append(out, "🛡 "+firstNonEmpty(oneLine(n.OriginalModel), "The model")+" refused, and there is no fallback model")
		case runner.NoticeModelFallback:
			s := "↪️ " + firstNonEmpty(oneLine(n.OriginalModel), "The model") + " was unavailable; " +
				firstNonEmpty(oneLine(answeredBy), oneLine(n.FallbackModel), "a fallback model") + " answered"
			out = append(out, s)
		case runner.NoticeInfo:
			if n.Level == "warning" && strings.TrimSpace(n.Text) != "" {
				out = append(out, "⚠️ "+oneLine(n.Text))
			}
		}
	}
	return out
}

// denialLines name each refused tool call (result.permission_denials) with
// its input and, when the turn saw it, why it was refused.
func denialLines(denials []runner.PermissionDenial, why map[runner.ToolUseID]string) []string {
	var out []string
	for i, d := range denials {
		if i == maxHappenedDenials {
			out = append(out, "🚫 +"+plural(len(denials)-i, "more refused tool call", "more refused tool calls"))
			break
		}
		s := "🚫 " + firstNonEmpty(oneLine(d.ToolName), "A tool")
		if d.ToolName == "ExitPlanMode" {
			s = "🚫 The plan" // "Keep planning" refuses ExitPlanMode; its input is the plan itself
		} else if sum := runner.ToolSummary(d.ToolName, d.ToolInput); sum != "" && sum != "{}" {
			s += " " + Truncate(sum, rowSummaryMax)
		}
		if w := why[runner.ToolUseID(d.ToolUseID)]; w != "" {
			s += ": " + w
		} else {
			s += ": not allowed"
		}
		out = append(out, s)
	}
	return out
}

// compactBody is the answer to a manual /compact, which has no text of its
// own: what the compaction did. "" when no compaction result is known.
func compactBody(h Happened) string {
	var w htmlText
	switch {
	case h.compacted:
		w.text("🗜 ")
		w.raw("<b>")
		w.text("Conversation compacted")
		w.raw("</b>")
		w.text(": " + formatTokens(h.compactPre) + " → " + formatTokens(h.compactPst) + " tokens")
	case strings.HasPrefix(h.compaction, "⚠️"):
		w.text(h.compaction)
	}
	return string(w.b)
}

package render

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

// FinalMeta is what the final answer's footer shows. Zero fields fall back
// to the result's own numbers, and are left out when those are zero too.
type FinalMeta struct {
	Duration       time.Duration
	CostUSD        float64
	ContextPercent float64
	Model          string
	// Effort is the effort level the turn ran with (/effort), shown after
	// the model when set.
	Effort string
	// Context is what the footer says about a context that fills up
	// (context.go): a warning at Context.WarnAt, and at Context.FullAt a
	// note on what happens when it runs out.
	Context ContextAlert
	// Happened is what the turn went through ([Turn.Happened]): the
	// notices printed above the footer.
	Happened Happened
	// Notes are plain-text lines the caller adds above those notices (a
	// scheduled turn, a budget or subscription-window warning).
	Notes []string
	// Project names where the turn ran, shown in the footer when set.
	Project string
	// ResumeLine, when set, is a command that takes the session over at a
	// terminal (cd <dir> && claude --resume <id>), shown under the footer
	// as code, whole: a line longer than ResumeLineMax or on several lines
	// is left out, since a command cut short is not the command.
	ResumeLine string
	// StoppedForRestart: a restart interrupted the turn, not the user.
	StoppedForRestart bool
	// Heading, plain text, goes above the answer of a turn nobody typed
	// (the CLI's own, after a background job ended), saying why it came.
	Heading string
}

// Layout limits of final messages, in UTF-16 units.
const (
	errorDetailMax = 600
	stderrTailMax  = 1500
	resetTextMax   = 40
)

// ResumeLineMax is the longest resume line an answer's footer or /status
// shows, in UTF-16 units; a longer one is left out rather than cut.
const ResumeLineMax = 1000

// RenderFinal renders a turn's result as one or more messages, each at most
// [SafeChunkLimit] visible units. The last carries a "what happened" block
// (see [Happened]; refused tool calls come from the result itself) and a
// footer ("⏱ 12s · $0.0042 · ctx 3% · claude-opus-5-5 · effort high", with
// "ctx 85% ⚠️" from meta.Context.WarnAt, and above it a note on what
// happens when the context runs out from meta.Context.FullAt). A successful
// answer is converted from Markdown; an empty one becomes "(no text
// answer)" because Telegram refuses empty messages, except that a manual
// /compact answers with what the compaction did. An interrupted turn says
// "Stopped." above any partial answer. Other failures become a short
// explanation with a hint (overloaded, usage or rate limit with its reset
// time, authentication, refusal, maximum turns, …) and an excerpt of the
// CLI's error text.
func RenderFinal(tc runner.TurnCompleted, meta FinalMeta) []string {
	var body string
	compactInBody := false
	switch {
	case tc.Aborted() && meta.StoppedForRestart:
		body = "⏸ <b>Stopped for a restart.</b> Send a message to go on; the session resumes."
		if strings.TrimSpace(tc.Answer) != "" {
			body += "\n\n" + MarkdownToHTML(tc.Answer)
		}
	case tc.Aborted():
		body = "⏹ <b>Stopped.</b>"
		if strings.TrimSpace(tc.Answer) != "" {
			body += "\n\n" + MarkdownToHTML(tc.Answer)
		}
	case !tc.OK:
		body = renderError(tc)
	case strings.TrimSpace(tc.Answer) == "" && tc.LocalCommand && compactBody(meta.Happened) != "":
		body, compactInBody = compactBody(meta.Happened), true
	case strings.TrimSpace(tc.Answer) == "":
		body = "<i>(no text answer)</i>"
	default:
		body = MarkdownToHTML(tc.Answer)
		if strings.TrimSpace(HTMLToPlain(body)) == "" {
			body = "<i>(no text answer)</i>"
		}
	}
	if h := strings.TrimSpace(meta.Heading); h != "" {
		body = "<i>" + EscapeHTML(Truncate(oneLine(h), noteMax)) + "</i>\n\n" + body
	}

	notes := append(meta.Notes[:len(meta.Notes):len(meta.Notes)], happenedLines(tc, meta.Happened, compactInBody)...)
	if meta.ContextLevel(tc) == ContextFull {
		notes = append(notes, contextNote(meta.Context, meta.contextPercent(tc)))
	}
	var tail htmlText
	for _, line := range notes {
		line = Truncate(line, noteMax)
		if tail.n+UTF16Len(line)+1 > notesTotalMax {
			break
		}
		newline(&tail)
		tail.text(line)
	}
	if footer := finalFooter(tc, meta); footer != "" {
		if tail.n > 0 {
			tail.raw("\n\n")
			tail.n += 2
		}
		tail.text(footer)
	}
	if line := wholeLine(meta.ResumeLine); line != "" {
		newline(&tail)
		tail.raw("<code>")
		tail.text(line)
		tail.raw("</code>")
	}
	chunks := SplitHTML(body, SafeChunkLimit)
	if len(chunks) == 0 {
		chunks = []string{"<i>(no text answer)</i>"}
	}
	if tail.n == 0 {
		return chunks
	}
	// The notes and footer go under the last chunk; if they do not fit
	// there, that chunk is split again with room for them.
	room := SafeChunkLimit - tail.n - 2
	last := chunks[len(chunks)-1]
	if VisibleLen(last) > room {
		chunks = append(chunks[:len(chunks)-1], SplitHTML(last, room)...)
		last = chunks[len(chunks)-1]
	}
	chunks[len(chunks)-1] = last + "\n\n" + string(tail.b)
	return chunks
}

// finalFooter is the plain-text footer line, "" when there is nothing to
// say.
func finalFooter(tc runner.TurnCompleted, meta FinalMeta) string {
	dur := meta.Duration
	if dur <= 0 {
		dur = tc.Duration
	}
	cost := meta.CostUSD
	if cost <= 0 {
		cost = tc.CostUSD
	}
	ctx := meta.contextPercent(tc)
	parts := make([]string, 0, 6)
	switch {
	case dur >= time.Second:
		parts = append(parts, "⏱ "+FormatElapsed(dur))
	case dur > 0:
		parts = append(parts, "⏱ "+formatDelay(dur)) // "0.2s" rather than "0s"
	}
	if cost > 0 {
		parts = append(parts, formatCost(cost))
	}
	if c := formatContext(ctx); c != "" {
		if meta.Context.Level(ctx) >= ContextWarn {
			c += " ⚠️"
		}
		parts = append(parts, "ctx "+c)
	}
	if m := Truncate(oneLine(meta.Model), footerModelMax); m != "" {
		parts = append(parts, m)
	}
	if e := Truncate(oneLine(meta.Effort), footerModelMax); e != "" {
		parts = append(parts, "effort "+e)
	}
	if p := Truncate(oneLine(meta.Project), footerModelMax); p != "" {
		parts = append(parts, "📁 "+p)
	}
	return strings.Join(parts, " · ")
}

// errorKind classifies a failed result for the user.
type errorKind uint8

const (
	errGeneric errorKind = iota
	errOverloaded
	errUsageLimit
	errRateLimit
	errAuth
	errRefusal
	errMaxTurns
	errBudget
	errConnection
	errContextLength
	errNoConversation
)

// classifyError looks at the typed fields first and the text only when they
// say nothing, because the CLI's wording changes between versions.
func classifyError(tc runner.TurnCompleted, text string) errorKind {
	lower := strings.ToLower(text)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(lower, s) {
				return true
			}
		}
		return false
	}
	switch {
	case tc.StopReason == "refusal" || strings.Contains(tc.TerminalReason, "refusal"):
		return errRefusal
	case tc.Subtype == "error_max_turns" || tc.TerminalReason == "max_turns":
		return errMaxTurns
	case strings.HasPrefix(tc.Subtype, "error_max_budget"):
		return errBudget
	case tc.APIErrorStatus == 401 || tc.APIErrorStatus == 403 ||
		tc.APIError == "authentication_error" || tc.APIError == "permission_error" || tc.APIError == "authentication_failed" ||
		has("authentication", "invalid api key", "/login", "oauth token has expired"):
		return errAuth
	case tc.APIError == "usage_limit_reached" || has("usage limit", "hit your") && has("limit"):
		return errUsageLimit
	case tc.APIErrorStatus == 429 || strings.HasPrefix(tc.APIError, "rate_limit") || has("rate limit", "rate_limit"):
		return errRateLimit
	case tc.APIErrorStatus == 529 || tc.APIError == "overloaded_error" || has("overloaded"):
		return errOverloaded
	case tc.APIError == "connection_failed" || has("econnrefused", "connection refused", "connection error", "enotfound", "fetch failed"):
		return errConnection
	case has("prompt is too long", "context length", "context window"):
		return errContextLength
	case has("no conversation found"):
		return errNoConversation
	}
	return errGeneric
}

// errorText is the CLI's explanation: the answer (for API errors it is the
// CLI's synthetic error text) and the result's errors, minus the CLI's
// internal diagnostics.
func errorText(tc runner.TurnCompleted) string {
	parts := make([]string, 0, 1+len(tc.Errors))
	if s := strings.TrimSpace(tc.Answer); s != "" {
		parts = append(parts, s)
	}
	for _, e := range tc.Errors {
		if e = strings.TrimSpace(e); e != "" && !strings.HasPrefix(e, "[ede_diagnostic]") {
			parts = append(parts, e)
		}
	}
	return apiErrorMessage(strings.Join(parts, "\n"))
}

// apiErrorMessage replaces a raw API error body such as
// `API Error: 500 {"type":"error","error":{"type":"api_error","message":"x"}}`
// with its message, so the user never sees JSON.
func apiErrorMessage(s string) string {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return s
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	if dec.Decode(&body) != nil {
		return s
	}
	msg := firstNonEmpty(body.Error.Message, body.Message)
	if msg == "" {
		return s
	}
	rest := strings.TrimSpace(s[i+int(dec.InputOffset()):])
	out := strings.TrimSpace(s[:i]) + " " + msg
	if rest != "" {
		out += "\n" + rest
	}
	return strings.TrimSpace(out)
}

// resetTime extracts "3:18am (UTC)" from "… · resets 3:18am (UTC)".
func resetTime(text string) string {
	lower := strings.ToLower(text)
	i := strings.Index(lower, "resets ")
	n := len("resets ")
	if i < 0 {
		if i = strings.Index(lower, "reset at "); i < 0 {
			return ""
		}
		n = len("reset at ")
	}
	s := text[i+n:]
	s = strings.TrimPrefix(s, "at ")
	if j := strings.IndexAny(s, "\n·|"); j >= 0 {
		s = s[:j]
	}
	if j := strings.Index(s, ". "); j >= 0 {
		s = s[:j]
	}
	return Truncate(strings.TrimSuffix(strings.TrimSpace(s), "."), resetTextMax)
}

func renderError(tc runner.TurnCompleted) string {
	text := errorText(tc)
	var title, hint string
	switch classifyError(tc, text+" "+tc.APIError) {
	case errOverloaded:
		title = "⚠️ Claude is overloaded"
		hint = "Anthropic's API is busy (529). This is usually temporary: send your message again in a minute."
	case errUsageLimit:
		title = "⛔ Usage limit reached"
		if r := resetTime(text); r != "" {
			title += " · resets " + r
		}
		hint = "Claude cannot answer until the limit resets; send your message again then."
	case errRateLimit:
		title = "⛔ Rate limited"
		if r := resetTime(text); r != "" {
			title += " · resets " + r
		}
		hint = "Too many requests (429). Wait a minute and send your message again."
	case errAuth:
		title = "🔑 Authentication failed"
		hint = "Claude Code on the host is not logged in or its key was rejected. Run claude /login there, or check ANTHROPIC_API_KEY."
	case errRefusal:
		title = "🛡 Claude declined to respond"
		hint = "Its safeguards flagged this request. Try rephrasing it, or start over with /new."
	case errMaxTurns:
		title = "🔁 Stopped at the maximum number of turns"
		if tc.NumTurns > 0 {
			title += " (" + strconv.Itoa(tc.NumTurns) + ")"
		}
		hint = "Send “continue” to let Claude carry on."
	case errBudget:
		title = "💰 Budget limit reached"
		hint = "The turn stopped at its spending cap."
	case errConnection:
		title = "🌐 Cannot reach the Claude API"
		hint = "Check the host's network connection, proxy or firewall, then send your message again."
	case errContextLength:
		title = "📚 The conversation is too long"
		hint = "Run /compact to summarise it, or /new to start over."
	case errNoConversation:
		title = "♻️ The session could not be resumed"
		hint = "Send your message again to start a new session."
	default:
		title = "❌ Claude reported an error"
		if tc.APIErrorStatus != 0 {
			title += " (" + strconv.Itoa(tc.APIErrorStatus) + ")"
		}
	}
	var w htmlText
	w.raw("<b>")
	w.text(title)
	w.raw("</b>")
	if hint != "" {
		w.raw("\n")
		w.text(hint)
	}
	if strings.TrimSpace(text) != "" {
		w.raw("\n\n<blockquote>")
		w.text(Truncate(strings.TrimSpace(text), errorDetailMax))
		w.raw("</blockquote>")
	}
	return string(w.b)
}

// RenderCrash tells the user that the CLI process died mid-turn, with the
// end of its stderr, and that the next message resumes the session.
func RenderCrash(exit runner.ProcessExited) string {
	var w htmlText
	w.text("💥 ")
	w.raw("<b>")
	w.text("Claude stopped unexpectedly")
	w.raw("</b>")
	w.text(" (" + exitText(exit) + "); your next message resumes the session.")
	if tail := strings.TrimSpace(exit.StderrTail); tail != "" {
		w.raw("\n\n<pre>")
		tail = truncateFront(tail, stderrTailMax, false)
		// Start at a whole line when the cut fell inside one.
		if rest, ok := strings.CutPrefix(tail, ellipsis); ok {
			if i := strings.IndexByte(rest, '\n'); i >= 0 && i < 200 {
				tail = ellipsis + rest[i:]
			}
		}
		w.text(tail)
		w.raw("</pre>")
	}
	return string(w.b)
}

// exitText is "exit 1" or "signal killed", or why untether ended it.
func exitText(exit runner.ProcessExited) string {
	if exit.Err != nil {
		return Truncate(oneLine(exit.Err.Error()), 120)
	}
	if exit.Signal != "" {
		return "signal " + Truncate(oneLine(exit.Signal), 30)
	}
	return "exit " + strconv.Itoa(exit.ExitCode)
}

// wholeLine is a resume line as it is shown, or "" when it cannot be shown
// whole on one line: longer than ResumeLineMax or holding a line break.
// Nothing in it is changed (not even white space, which may be quoted).
func wholeLine(line string) string {
	if strings.ContainsAny(line, "\n\r") || UTF16Len(line) > ResumeLineMax {
		return ""
	}
	return strings.TrimSpace(line)
}

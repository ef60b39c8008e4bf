package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/untether/untether/internal/runner"
)

// ApprovalButtons is the callback data of an approval message's buttons.
// An empty field leaves its button out. Each value must be at most 64 bytes;
// short server-side tokens rather than raw request ids keep it so.
type ApprovalButtons struct {
	Approve string
	Deny    string
	// Always is shown only when the request carries permission
	// suggestions; pressing it means "allow and apply the suggestions".
	Always string
	// Options holds the callback data of the current AskUserQuestion
	// question's options, in order (see [RenderQuestion]).
	Options []string
	// Done finishes a multi-select question.
	Done string
	// FullDiff sends an Edit's or Write's whole change as a document; the
	// button is shown only when the message shows less of it.
	FullDiff string
}

// Decision is the outcome line of a decided approval, e.g. "Approved".
type Decision string

// The usual decisions; [Answered] builds the one for a chosen option.
const (
	DecisionApproved      Decision = "Approved"
	DecisionDenied        Decision = "Denied"
	DecisionAlwaysAllowed Decision = "Always allowed"
	DecisionExpired       Decision = "Expired"
	DecisionWithdrawn     Decision = "Withdrawn"
	DecisionInterrupted   Decision = "Interrupted by restart"
)

// Answered is the decision for an AskUserQuestion answered with label.
func Answered(label string) Decision { return Decision("Answered: " + label) }

// Undelivered is the outcome when the user chose but the answer could not
// be written to the CLI, so Claude never got it.
func Undelivered(chosen Decision) Decision {
	return Decision("Could not reach Claude; not delivered: " + string(chosen))
}

// Layout limits of approval messages, in UTF-16 units or lines.
const (
	approvalDescMax   = 300
	approvalPathMax   = 200
	approvalAlwaysMax = 400
	alwaysLabelMax    = 48
	optionLabelMax    = 60
	diffSideLines     = 30
	diffContext       = 2
	writeHeadLines    = 20
	decisionLineMax   = 200
)

// RenderApproval renders a tool-permission request as a new message (so
// the phone notifies) with its buttons. The text names the tool and shows
// what it would do: a Bash command, an Edit as a small diff, the start of a
// Write, the plan of ExitPlanMode, the questions of AskUserQuestion (as
// [RenderQuestion] at its first question), or the raw input of any other tool.
func RenderApproval(req runner.ApprovalRequested, b ApprovalButtons) (string, Keyboard) {
	if req.Tool == "AskUserQuestion" {
		return RenderQuestion(req, QuestionState{}, b)
	}
	return string(approvalBody(req, SafeChunkLimit).b), approvalKeyboard(req, b)
}

// RenderApprovalDecided is the approval message after a decision: the same
// summary, without buttons (the caller removes the keyboard), and a line
// saying what was decided, by whom and when. by and at may be empty.
func RenderApprovalDecided(req runner.ApprovalRequested, outcome Decision, by string, at time.Time) string {
	var line htmlText
	line.text(decisionIcon(outcome) + " ")
	line.raw("<b>")
	line.text(Truncate(firstNonEmpty(oneLine(string(outcome)), "Decided"), decisionLineMax/2))
	line.raw("</b>")
	if by = oneLine(by); by != "" {
		line.text(" by " + Truncate(by, 60))
	}
	if !at.IsZero() {
		line.text(" · " + at.UTC().Format("Jan 2 15:04:05 UTC"))
	}
	body := approvalBody(req, SafeChunkLimit-line.n-2)
	return string(body.b) + "\n\n" + string(line.b)
}

func decisionIcon(d Decision) string {
	s := string(d)
	switch {
	case strings.HasPrefix(s, string(DecisionAlwaysAllowed)):
		return "🔓"
	case strings.HasPrefix(s, string(DecisionApproved)):
		return "✅"
	case strings.HasPrefix(s, string(DecisionDenied)):
		return "❌"
	case strings.HasPrefix(s, "Answered"):
		return "💬"
	case strings.HasPrefix(s, string(DecisionExpired)):
		return "⌛"
	case strings.HasPrefix(s, string(DecisionWithdrawn)):
		return "↩️"
	case strings.HasPrefix(s, "Interrupted"), strings.HasPrefix(s, "Could not"):
		return "⚠️"
	}
	return "•"
}

// approvalBody renders the request's text within budget visible units.
func approvalBody(req runner.ApprovalRequested, budget int) htmlText {
	return promptBody(req, nil, budget)
}

// promptBody is approvalBody with an AskUserQuestion's state (nil once
// decided).
func promptBody(req runner.ApprovalRequested, q *QuestionState, budget int) htmlText {
	tool := firstNonEmpty(oneLine(req.DisplayName), oneLine(req.Tool), "Tool")
	tool = Truncate(tool, rowNameMax)

	var head htmlText
	switch req.Tool {
	case "ExitPlanMode":
		head.text("📋 ")
		head.raw("<b>")
		head.text("Plan ready for review")
		head.raw("</b>")
	case "AskUserQuestion":
		head.text("❓ ")
		head.raw("<b>")
		head.text(questionTitle(req))
		head.raw("</b>")
	default:
		head.text("🔐 ")
		head.raw("<b>")
		head.text(tool)
		head.raw("</b>")
		head.text(" needs your approval")
	}

	// The lines after the content, built first so the content can take
	// whatever room they leave.
	var tail htmlText
	if req.Description != "" && !req.Interactive {
		tail.raw("<i>")
		tail.text(Truncate(oneLine(req.Description), approvalDescMax))
		tail.raw("</i>")
	}
	if why := askReason(req); why != "" && !req.Interactive {
		newline(&tail)
		tail.text(Truncate("ℹ️ Why it asks: "+why, approvalDescMax))
	}
	if req.BlockedPath != "" {
		newline(&tail)
		tail.text("📁 Blocked path: ")
		tail.raw("<code>")
		tail.text(Truncate(oneLine(req.BlockedPath), approvalPathMax))
		tail.raw("</code>")
	}
	if s := parseSuggestions(req.Suggestions); len(s) > 0 {
		if d := alwaysDescription(s); d != "" {
			newline(&tail)
			tail.text(Truncate("🔓 “Always allow” adds "+d, approvalAlwaysMax))
		}
	}

	room := budget - head.n - sectionLen(tail.n, 2) - 2
	var content htmlText
	switch req.Tool {
	case "Bash":
		bashContent(&content, req.Input, room)
	case "Edit", "MultiEdit":
		editContent(&content, req.Tool, req.Input, room)
	case "Write":
		writeContent(&content, req.Input, room)
	case "ExitPlanMode":
		planContent(&content, req, room)
	case "AskUserQuestion":
		questionContent(&content, req, q, room)
	default:
		jsonContent(&content, req, room)
	}

	out := head
	for _, s := range []*htmlText{&content, &tail} {
		if s.n > 0 {
			out.raw("\n\n")
			out.n += 2
			out.b = append(out.b, s.b...)
			out.n += s.n
		}
	}
	return out
}

func newline(w *htmlText) {
	if w.n > 0 {
		w.raw("\n")
		w.n++
	}
}

// pre writes code as a pre block, truncated to room units.
func pre(w *htmlText, lang, code string, room int) {
	code = strings.TrimRight(code, "\n")
	if strings.TrimSpace(code) == "" || room < 2 {
		return
	}
	if lang != "" {
		w.raw(`<pre><code class="language-` + lang + `">`)
	} else {
		w.raw("<pre>")
	}
	w.text(Truncate(code, room))
	if lang != "" {
		w.raw("</code>")
	}
	w.raw("</pre>")
}

func inputFields(input json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(input, &m) // a malformed input renders as the generic form
	return m
}

func stringField(m map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(m[k], &s)
	return s
}

func bashContent(w *htmlText, input json.RawMessage, room int) {
	m := inputFields(input)
	cmd := stringField(m, "command")
	if cmd == "" {
		pre(w, "json", prettyJSON(input), room)
		return
	}
	var bg bool
	_ = json.Unmarshal(m["run_in_background"], &bg)
	if bg {
		w.text("Runs in the background.\n")
	}
	pre(w, "bash", cmd, room-w.n)
}

func editContent(w *htmlText, tool string, input json.RawMessage, room int) {
	path, edits := editsOf(tool, input) // fulldiff.go
	if path != "" {
		w.raw("<code>")
		w.text(Truncate(oneLine(path), approvalPathMax))
		w.raw("</code>")
	}
	var diff strings.Builder
	replaceAll := false
	for i, e := range edits {
		if i > 0 {
			diff.WriteString("⋯\n")
		}
		writeDiff(&diff, e.Old, e.New)
		replaceAll = replaceAll || e.ReplaceAll
	}
	if replaceAll {
		newline(w)
		w.text("Replaces every occurrence.")
	}
	if diff.Len() == 0 {
		return
	}
	newline(w)
	pre(w, "diff", diff.String(), room-w.n)
}

// writeDiff writes a short unified-style diff of old and new: the lines
// they share at either end are context (at most two on each side), the rest
// is shown as removed and added, at most diffSideLines per side.
func writeDiff(b *strings.Builder, old, new string) {
	writeDiffN(b, old, new, diffSideLines, diffContext)
}

// writeDiffN is writeDiff with its limits: at most sideMax lines per side
// (no limit when negative), context lines of context at either end.
func writeDiffN(b *strings.Builder, old, new string, sideMax, context int) {
	ol, nl := splitLines(old), splitLines(new)
	pre := 0
	for pre < len(ol) && pre < len(nl) && ol[pre] == nl[pre] {
		pre++
	}
	suf := 0
	for suf < len(ol)-pre && suf < len(nl)-pre && ol[len(ol)-1-suf] == nl[len(nl)-1-suf] {
		suf++
	}
	if pre > context {
		b.WriteString("  …\n")
	}
	for _, l := range ol[max(0, pre-context):pre] {
		b.WriteString("  " + l + "\n")
	}
	side := func(mark string, lines []string) {
		for i, l := range lines {
			if i == sideMax {
				fmt.Fprintf(b, "%s … %d more lines\n", mark, len(lines)-i)
				return
			}
			b.WriteString(mark + " " + l + "\n")
		}
	}
	side("-", ol[pre:len(ol)-suf])
	side("+", nl[pre:len(nl)-suf])
	for _, l := range ol[len(ol)-suf : len(ol)-suf+min(suf, context)] {
		b.WriteString("  " + l + "\n")
	}
	if suf > context {
		b.WriteString("  …\n")
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func writeContent(w *htmlText, input json.RawMessage, room int) {
	m := inputFields(input)
	path := stringField(m, "file_path")
	content := stringField(m, "content")
	if path != "" {
		w.raw("<code>")
		w.text(Truncate(oneLine(path), approvalPathMax))
		w.raw("</code>")
		w.text(" · ")
	}
	lines := splitLines(content)
	w.text(plural(len(lines), "line", "lines") + ", " + plural(len(content), "byte", "bytes"))
	if len(lines) == 0 {
		return
	}
	head := lines[:min(len(lines), writeHeadLines)]
	more := ""
	if n := len(lines) - len(head); n > 0 {
		more = fmt.Sprintf("\n… %s", plural(n, "more line", "more lines"))
	}
	newline(w)
	pre(w, "", strings.Join(head, "\n"), room-w.n-UTF16Len(more))
	w.text(more)
}

func planContent(w *htmlText, req runner.ApprovalRequested, room int) {
	var plan, file string
	if req.Plan != nil {
		plan, file = req.Plan.Plan, req.Plan.PlanFile
	}
	if plan == "" {
		m := inputFields(req.Input)
		plan, file = stringField(m, "plan"), firstNonEmpty(file, stringField(m, "planFilePath"))
	}
	var tail htmlText
	if file != "" {
		tail.text("📄 ")
		tail.raw("<code>")
		tail.text(Truncate(oneLine(file), approvalPathMax))
		tail.raw("</code>")
	}
	room -= sectionLen(tail.n, 2)
	if strings.TrimSpace(plan) == "" {
		w.raw("<i>")
		w.text("Claude wrote no plan file.")
		w.raw("</i>")
	} else {
		html := MarkdownToHTML(plan)
		if VisibleLen(html) > room {
			more := fmt.Sprintf("… plan truncated (%d characters in full)", UTF16Len(plan))
			html = SplitHTML(html, room-UTF16Len(more)-1)[0]
			html += "\n<i>" + EscapeHTML(more) + "</i>"
		}
		w.raw(html)
		w.n += VisibleLen(html)
	}
	w.section(tail)
}

func jsonContent(w *htmlText, req runner.ApprovalRequested, room int) {
	if s := oneLine(req.Summary); s != "" && !strings.HasPrefix(s, "{") {
		w.text(Truncate(s, 200))
		newline(w)
	}
	pre(w, "json", prettyJSON(req.Input), room-w.n)
}

// prettyJSON indents input for reading; anything that is not JSON is shown
// as it came.
func prettyJSON(input json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, input, "", "  ") != nil {
		return string(input)
	}
	return b.String()
}

// suggestion is one permission_suggestions entry of a can_use_tool request.
type suggestion struct {
	Type  string `json:"type"`
	Rules []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
	Behavior    string   `json:"behavior"`
	Destination string   `json:"destination"`
	Directories []string `json:"directories"`
	Mode        string   `json:"mode"`
}

// parseSuggestions returns the suggestions that widen permissions. It
// returns nil for anything but a non-empty JSON array; entries that do not
// decode are kept as zero values so the button still shows.
func parseSuggestions(raw json.RawMessage) []suggestion {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil
	}
	out := make([]suggestion, 0, len(items))
	for _, it := range items {
		var s suggestion
		_ = json.Unmarshal(it, &s)
		if s.Behavior != "" && s.Behavior != "allow" {
			continue // a deny/ask rule is not what "always allow" means
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = append(out, suggestion{})
	}
	return out
}

// short describes a suggestion in a few words: "Bash(echo hi *)",
// "access to /home/dev/project", "accept edits".
func (s suggestion) short() string {
	switch s.Type {
	case "addRules", "replaceRules":
		rules := make([]string, 0, len(s.Rules))
		for _, r := range s.Rules {
			rule := oneLine(r.ToolName)
			if r.RuleContent != "" {
				rule += "(" + oneLine(r.RuleContent) + ")"
			}
			rules = append(rules, rule)
		}
		return strings.Join(rules, ", ")
	case "addDirectories":
		return "access to " + oneLine(strings.Join(s.Directories, ", "))
	case "setMode":
		switch runner.PermissionMode(s.Mode) {
		case runner.ModeAcceptEdits:
			return "accept edits"
		case runner.ModeBypassPermissions:
			return "bypass permissions"
		case runner.ModePlan:
			return "plan mode"
		}
		return oneLine(s.Mode) + " mode"
	}
	return ""
}

func destinationName(d string) string {
	switch d {
	case "session":
		return "this session"
	case "localSettings":
		return "local settings"
	case "projectSettings":
		return "project settings"
	case "userSettings":
		return "user settings"
	case "cliArg":
		return "this run"
	}
	return oneLine(d)
}

// alwaysDescription lists what pressing "Always allow" would change.
func alwaysDescription(ss []suggestion) string {
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		d := s.short()
		if d == "" {
			continue
		}
		if s.Type == "addRules" || s.Type == "replaceRules" {
			d = "rule " + d
		}
		if s.Destination != "" {
			d += " (" + destinationName(s.Destination) + ")"
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "; ")
}

// alwaysLabel is the button text, from the first suggestion.
func alwaysLabel(ss []suggestion) string {
	label := "🔓 Always allow"
	for i, s := range ss {
		d := s.short()
		if d == "" {
			continue
		}
		switch {
		case s.Type == "setMode" && s.Destination == "session":
			label = "🔓 " + upperFirst(d) + " this session"
		case s.Type == "setMode":
			label = "🔓 " + upperFirst(d)
		default:
			label = "🔓 Always allow " + d
		}
		label = Truncate(label, alwaysLabelMax)
		if more := len(ss) - i - 1; more > 0 {
			label += fmt.Sprintf(" +%d", more)
		}
		break
	}
	return label
}

func approvalKeyboard(req runner.ApprovalRequested, b ApprovalButtons) Keyboard {
	var kb Keyboard
	add := func(row ...Button) {
		kept := row[:0]
		for _, bt := range row {
			if bt.CallbackData != "" {
				kept = append(kept, bt)
			}
		}
		if len(kept) > 0 {
			kb.Rows = append(kb.Rows, kept)
		}
	}
	switch req.Tool {
	case "ExitPlanMode":
		add(Button{Text: "✅ Approve plan", CallbackData: b.Approve},
			Button{Text: "📝 Keep planning", CallbackData: b.Deny})
	default:
		add(Button{Text: "✅ Approve", CallbackData: b.Approve},
			Button{Text: "❌ Deny", CallbackData: b.Deny})
		if b.FullDiff != "" && PreviewTruncated(req) { // fulldiff.go
			add(Button{Text: "📄 Full diff", CallbackData: b.FullDiff})
		}
		if b.Always != "" {
			if ss := parseSuggestions(req.Suggestions); len(ss) > 0 {
				add(Button{Text: alwaysLabel(ss), CallbackData: b.Always})
			}
		}
	}
	return kb
}

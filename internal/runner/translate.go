package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// previewLimit bounds tool-result previews and input summaries carried in
// events: enough for a phone screen, small enough to keep events cheap.
const previewLimit = 300

// Translator turns decoded frames into Events. It holds the little state the
// protocol requires across frames: tool names by id (results only carry the
// id), the turn's last answer text (the result's text can be empty) and the
// running cost total (the CLI reports it cumulatively). It is not safe for
// concurrent use; a session owns one.
type Translator struct {
	tools       map[ToolUseID]string
	model       string
	answerModel string // the model of the latest main answer text
	lastMsgID   string
	lastText    strings.Builder
	leaf        string // the uuid of the turn's latest main assistant message
	lastUsage   Usage
	haveUsage   bool
	costBase    float64 // the total the CLI reported at the previous result
	haveBase    bool
	stopsBase   int // the running safety_stops total at the previous result
	// wake is the scheduler fire that command_lifecycle said is starting;
	// the next system/init is its turn.
	wake   WakeupSource
	wakeAt time.Time
}

// NewTranslator returns a translator whose cost baseline is the running
// total persisted from an earlier process of the same session (0 if none).
func NewTranslator(costBaseline float64) *Translator {
	return &Translator{tools: make(map[ToolUseID]string), costBase: costBaseline, haveBase: costBaseline > 0}
}

// CostBaseline is the running total seen at the last result, to persist.
func (t *Translator) CostBaseline() float64 { return t.costBase }

// Translate appends the events for one frame to out and returns it.
func (t *Translator) Translate(f Frame, out []Event) []Event {
	switch f := f.(type) {
	case *SystemFrame:
		return t.system(f, out)
	case *AssistantFrame:
		return t.assistant(f, out)
	case *UserFrame:
		return t.user(f, out)
	case *ResultFrame:
		return t.result(f, out)
	case *RateLimitFrame:
		return append(out, rateLimit(f.Info))
	case *StreamEventFrame:
		if f.Event.Type == "content_block_delta" && f.Event.Delta.Type == "text_delta" && f.ParentToolUseID == nil {
			return append(out, TextDelta{Text: f.Event.Delta.Text})
		}
		return out
	case *ControlRequestFrame:
		if f.Request.Subtype == "can_use_tool" {
			return append(out, approval(f))
		}
		return out // answered by the session; nothing to show
	case *ControlCancelFrame:
		return append(out, ApprovalWithdrawn{RequestID: f.RequestID})
	case *CommandLifecycleFrame:
		ev := MessageLifecycle{UUID: f.CommandUUID, State: MessageState(f.State), Wakeup: WakeupSource(f.WakeupSource)}
		if f.ScheduledFor > 0 {
			ev.ScheduledFor = time.UnixMilli(int64(f.ScheduledFor)).UTC()
		}
		if ev.Wakeup != "" && ev.State == MessageStarted {
			t.wake, t.wakeAt = ev.Wakeup, ev.ScheduledFor
		}
		return append(out, ev)
	case *ConversationResetFrame:
		return append(out, ConversationReset{NewConversationID: f.NewConversationID})
	case *ToolProgressFrame, *ControlResponseFrame, *QuietFrame:
		return out // heartbeats and our own request acks carry nothing to show
	case *UnknownFrame:
		return append(out, Unknown{Kind: f.Kind(), Raw: f.Raw})
	}
	return out
}

func (t *Translator) system(f *SystemFrame, out []Event) []Event {
	switch f.Subtype {
	case "init":
		t.model = f.Model
		t.resetTurn()
		tools := f.Tools
		ev := TurnStarted{
			SessionID: frameSessionID(f.SessionID), Model: f.Model,
			PermissionMode: PermissionMode(f.PermissionMode), Cwd: f.Cwd,
			Tools: tools, Version: f.ClaudeCodeVersion,
			Wakeup: t.wake, ScheduledFor: t.wakeAt, McpServers: f.McpServers,
		}
		t.wake, t.wakeAt = "", time.Time{}
		return append(out, ev)
	case "api_retry":
		ev := APIRetry{Attempt: f.Attempt, MaxRetries: f.MaxRetries,
			Delay: time.Duration(f.RetryDelayMS) * time.Millisecond, Error: rawString(f.Error)}
		if f.ErrorStatus != nil {
			ev.Status = *f.ErrorStatus
		}
		return append(out, ev)
	case "status":
		switch {
		case f.Status != nil && *f.Status == "compacting":
			return append(out, CompactionStarted{})
		case f.CompactResult == "failed":
			return append(out, CompactionFailed{Error: f.CompactError})
		case f.Status == nil && f.PermissionMode != "":
			return append(out, PermissionModeChanged{Mode: PermissionMode(f.PermissionMode)})
		}
		return out
	case "compact_boundary":
		ev := CompactionFinished{}
		if m := f.CompactMetadata; m != nil {
			ev = CompactionFinished{Trigger: m.Trigger, PreTokens: m.PreTokens, PostTokens: m.PostTokens}
			if m.PostTokens > 0 {
				// The context is now the summary: until the next response
				// reports real usage, that is the best size there is, and
				// the pre-compaction usage would overstate it.
				t.lastUsage, t.haveUsage = Usage{InputTokens: m.PostTokens}, true
			}
		}
		return append(out, ev)
	case "informational":
		return append(out, Notice{Kind: NoticeInfo, Level: f.Level, Text: f.Content})
	case "notification":
		return append(out, notificationNotice(f)) // hooks.go
	case "model_fallback":
		return append(out, Notice{Kind: NoticeModelFallback, Level: "warning", Text: f.Content,
			OriginalModel: f.OriginalModel, FallbackModel: f.FallbackModel})
	case "model_refusal_fallback":
		return append(out, Notice{Kind: NoticeRefusalFallback, Level: "warning", Text: f.Content,
			OriginalModel: f.OriginalModel, FallbackModel: f.FallbackModel, Category: deref(f.APIRefusalCategory)})
	case "model_refusal_no_fallback":
		return append(out, Notice{Kind: NoticeRefusalNoFallback, Level: "warning", Text: f.Content,
			OriginalModel: f.OriginalModel, Category: deref(f.APIRefusalCategory)})
	case "permission_denied":
		return append(out, PermissionDenied{Tool: f.ToolName, ToolUseID: ToolUseID(f.ToolUseID),
			Reason: f.DecisionReasonType, Message: f.Message})
	case "task_started":
		return append(out, TaskStarted{TaskID: f.TaskID, ToolUseID: ToolUseID(f.ToolUseID),
			Description: f.Description, TaskType: f.TaskType, Backgrounded: f.IsBackgrounded})
	case "task_progress":
		ev := TaskProgress{TaskID: f.TaskID, Description: f.Description, LastTool: f.LastToolName}
		if f.Usage != nil {
			ev.Tokens, ev.ToolUses = f.Usage.TotalTokens, f.Usage.ToolUses
		}
		return append(out, ev)
	case "task_updated":
		ev := TaskUpdated{TaskID: f.TaskID}
		if f.Patch != nil {
			ev.Status = f.Patch.Status
		}
		return append(out, ev)
	case "task_notification":
		return append(out, TaskFinished{TaskID: f.TaskID, ToolUseID: ToolUseID(f.ToolUseID),
			Status: deref(f.Status), Summary: f.Summary, OutputFile: f.OutputFile})
	case "background_tasks_changed":
		return append(out, BackgroundTasks{Tasks: f.Tasks})
	}
	// hook_* and thinking_tokens decode fine but carry nothing a chat shows.
	return out
}

func (t *Translator) assistant(f *AssistantFrame, out []Event) []Event {
	blocks, err := f.Message.Blocks()
	if err != nil {
		out = append(out, Unknown{Kind: f.Kind(), Err: err})
	}
	parent := ToolUseID(deref(f.ParentToolUseID))
	synthetic := f.Message.Model == "<synthetic>" || f.IsAPIErrorMessage
	main := parent == ""
	if main && f.UUID != "" {
		t.leaf = f.UUID
	}
	if main && !synthetic && f.Message.Usage != nil {
		t.lastUsage, t.haveUsage = *f.Message.Usage, true
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if main {
				if f.Message.ID != t.lastMsgID {
					t.lastMsgID = f.Message.ID
					t.lastText.Reset()
				}
				if t.lastText.Len() > 0 {
					t.lastText.WriteString("\n\n")
				}
				t.lastText.WriteString(b.Text)
				t.answerModel = f.Message.Model
				if synthetic {
					t.answerModel = ""
				}
			}
			out = append(out, AssistantText{MessageID: f.Message.ID, Text: b.Text,
				ParentToolUseID: parent, Aborted: f.Aborted, Synthetic: synthetic})
		case "thinking":
			if b.Thinking != "" {
				out = append(out, Thinking{Text: b.Thinking, ParentToolUseID: parent})
			}
		case "redacted_thinking":
		case "tool_use", "server_tool_use":
			id := ToolUseID(b.ID)
			t.tools[id] = b.Name
			out = append(out, ToolStarted{ID: id, Name: b.Name, Input: b.Input,
				Summary: ToolSummary(b.Name, b.Input), ParentID: parent, Server: b.Type == "server_tool_use",
				Schedule: parseSchedule(b.Name, b.Input)})
		case "image", "document":
			// Media echoes: nothing to show, but they must not break the line.
		default:
			if isServerToolResult(b.Type) { // server_tools.go
				out = append(out, t.serverToolFinished(b, parent))
				continue
			}
			// A block type newer than this code: keep the message content raw.
			out = append(out, Unknown{Kind: "assistant/block/" + b.Type, Raw: f.Message.Content})
		}
	}
	if sr := f.Message.StopReason; (sr != nil && *sr == "refusal") || (f.Message.StopDetails != nil && f.Message.StopDetails.Type == "refusal") {
		n := Notice{Kind: NoticeSafeguard, Level: "notice", OriginalModel: f.Message.Model}
		if d := f.Message.StopDetails; d != nil {
			n.Category, n.Text = d.Category, d.Explanation
		}
		out = append(out, n)
	}
	return out
}

func (t *Translator) user(f *UserFrame, out []Event) []Event {
	if f.IsReplay {
		return out
	}
	blocks, err := f.Message.Blocks()
	if err != nil {
		out = append(out, Unknown{Kind: f.Kind(), Err: err})
	}
	parent := ToolUseID(deref(f.ParentToolUseID))
	if f.RefusedMessageID != "" {
		// The assistant frames of a refused response carry stop_reason null
		// (the CLI forwards blocks before the stop), so this synthetic
		// continuation is where a safeguard stop becomes visible.
		out = append(out, Notice{Kind: NoticeSafeguard, Level: "notice", Text: "Safeguards stopped the response; Claude continues once with that noted."})
	}
	for _, b := range blocks {
		if b.Type == "advisor_tool_result" {
			out = append(out, t.serverToolFinished(b, parent))
			continue
		}
		if b.Type != "tool_result" {
			continue // interrupt markers, synthetic continuations, media echoes
		}
		id := ToolUseID(b.ToolUseID)
		name := t.tools[id]
		delete(t.tools, id)
		ev := ToolFinished{ID: id, Name: name, OK: !b.IsError,
			Preview: truncate(toolResultText(b.Content), previewLimit), ParentID: parent}
		for _, m := range f.ToolResultMeta {
			if m.ID != b.ToolUseID {
				continue
			}
			ev.NotRun = m.NonExecutionKind
			if d := m.PermissionDecision; d != nil {
				ev.Permission = &PermissionDecision{Decision: d.Decision, Source: d.Source, ReasonType: d.ReasonType}
			}
		}
		if isScheduleTool(name) && !b.IsError {
			// tool_use_result is the frame's one structured result; the
			// CLI writes one frame per tool_result.
			ev.FiresAt, ev.ScheduleText = scheduleResult(f.ToolUseResult)
		}
		if !b.IsError {
			ev.CronJobs = cronJobs(name, f.ToolUseResult) // schedule.go
		}
		ev.Links = resourceLinks(f.ToolUseResult) // links.go
		out = append(out, ev)
	}
	return out
}

func (t *Translator) result(f *ResultFrame, out []Event) []Event {
	ev := TurnCompleted{
		SessionID: frameSessionID(f.SessionID), OK: !f.IsError, Subtype: f.Subtype,
		TerminalReason: f.TerminalReason, StopReason: rawString(f.StopReason),
		Answer: f.Result, TotalCostUSD: f.TotalCostUSD, Usage: f.Usage,
		Duration:    time.Duration(f.DurationMS) * time.Millisecond,
		APIDuration: time.Duration(f.DurationAPIMS) * time.Millisecond,
		NumTurns:    f.NumTurns, APIError: rawString(f.APIError),
		Denials: f.PermissionDenials, Errors: f.Errors,
		LocalCommand: len(f.LocalCommand) > 0 && string(f.LocalCommand) != "null",
		Model:        t.answerModel,
	}
	// safety_stops is a running total per process, like the cost.
	ev.SafetyStops = f.SafetyStops - t.stopsBase
	if ev.SafetyStops < 0 {
		ev.SafetyStops = f.SafetyStops
	}
	t.stopsBase = f.SafetyStops
	if ev.Answer == "" && !f.IsError {
		ev.Answer = t.lastText.String()
	}
	ev.Leaf = t.leaf
	if f.APIErrorStatus != nil {
		ev.APIErrorStatus = *f.APIErrorStatus
	}
	for _, u := range f.UserMessageUUIDs {
		ev.Messages = append(ev.Messages, MessageUUID(u))
	}
	if len(f.Origin) > 0 && f.Origin[0] == '{' {
		var o struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(f.Origin, &o) == nil {
			ev.Origin = o.Kind
		}
	}
	// This turn's cost: the CLI's per-result usage when it reports one,
	// else the growth of its running total. A total below the baseline
	// means the CLI restarted its count (it does after a SIGKILL).
	if f.ModelUsageSinceLastResult != nil {
		for _, m := range f.ModelUsageSinceLastResult {
			ev.CostUSD += m.CostUSD
		}
	} else if t.haveBase && f.TotalCostUSD >= t.costBase {
		ev.CostUSD = f.TotalCostUSD - t.costBase
	} else {
		ev.CostUSD = f.TotalCostUSD
	}
	if f.TotalCostUSD > 0 {
		t.costBase, t.haveBase = f.TotalCostUSD, true
	}
	ev.ContextWindow = contextWindow(f.ModelUsage, t.model)
	if t.haveUsage {
		ev.ContextTokens = t.lastUsage.ContextTokens()
		if ev.ContextWindow > 0 {
			ev.ContextPercent = 100 * float64(ev.ContextTokens) / float64(ev.ContextWindow)
		}
	}
	t.resetTurn()
	return append(out, ev)
}

func (t *Translator) resetTurn() {
	t.lastMsgID = ""
	t.lastText.Reset()
	t.answerModel = ""
	t.leaf = ""
}

// contextWindow picks the window of the turn's model, else the largest one
// reported (subagents may use smaller models).
func contextWindow(usage map[string]ModelUsage, model string) int64 {
	if m, ok := usage[model]; ok && m.ContextWindow > 0 {
		return m.ContextWindow
	}
	var best int64
	for _, m := range usage {
		best = max(best, m.ContextWindow)
	}
	return best
}

func rateLimit(i RateLimitInfo) RateLimit {
	ev := RateLimit{Status: i.Status, WindowType: i.RateLimitType, Utilization: -1, Overage: i.OverageStatus}
	if i.ResetsAt > 0 {
		ev.ResetsAt = time.Unix(i.ResetsAt, 0).UTC()
	}
	if i.Utilization != nil {
		ev.Utilization = *i.Utilization
	} else if w, ok := i.UnifiedWindows[i.RateLimitType]; ok {
		ev.Utilization = w.Utilization
	}
	for name, w := range i.UnifiedWindows {
		lw := LimitWindow{Type: name, Status: w.Status, Utilization: w.Utilization}
		if w.ResetsAt > 0 {
			lw.ResetsAt = time.Unix(w.ResetsAt, 0).UTC()
		}
		ev.Windows = append(ev.Windows, lw)
	}
	slices.SortFunc(ev.Windows, func(a, b LimitWindow) int { return strings.Compare(a.Type, b.Type) })
	return ev
}

func approval(f *ControlRequestFrame) ApprovalRequested {
	r := f.Request
	ev := ApprovalRequested{
		RequestID: f.RequestID, ToolUseID: ToolUseID(r.ToolUseID), Tool: r.ToolName,
		DisplayName: r.DisplayName, Input: r.Input, Suggestions: r.PermissionSuggestions,
		BlockedPath: r.BlockedPath, Description: r.Description,
		Summary:     ToolSummary(r.ToolName, r.Input),
		Interactive: r.RequiresUserInteraction,
		ReasonType:  r.DecisionReasonType, Reason: r.DecisionReason,
	}
	switch r.ToolName {
	case "AskUserQuestion":
		var in struct {
			Questions []Question `json:"questions"`
		}
		_ = json.Unmarshal(r.Input, &in) // a malformed input still shows the raw summary
		ev.Questions = in.Questions
		ev.Interactive = true
	case "ExitPlanMode":
		var in struct {
			Plan         string `json:"plan"`
			PlanFilePath string `json:"planFilePath"`
		}
		_ = json.Unmarshal(r.Input, &in)
		ev.Plan = &PlanApproval{Plan: in.Plan, PlanFile: in.PlanFilePath}
		ev.Interactive = true
	}
	return ev
}

// ToolSummary is a one-line human summary of a tool call's input.
func ToolSummary(tool string, input json.RawMessage) string {
	var in map[string]any
	if len(input) == 0 || json.Unmarshal(input, &in) != nil {
		return truncate(string(input), previewLimit)
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	var s string
	switch tool {
	case "Bash":
		s = str("command")
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit":
		s = str("file_path")
		if s == "" {
			s = str("notebook_path")
		}
	case "Glob", "Grep":
		s = str("pattern")
		if p := str("path"); p != "" {
			s += " in " + p
		}
	case "WebFetch":
		s = str("url")
	case "WebSearch", "web_search":
		s = str("query")
	case "web_fetch":
		s = str("url")
	case "code_execution", "bash_code_execution":
		s = str("code")
		if s == "" {
			s = str("command")
		}
	case "text_editor_code_execution":
		s = strings.TrimSpace(str("command") + " " + str("path"))
	case "Task", "Agent":
		s = str("description")
	case "Skill":
		s = str("skill")
	case "TodoWrite":
		if todos, ok := in["todos"].([]any); ok {
			s = fmt.Sprintf("%d todos", len(todos))
		}
	case "AskUserQuestion":
		if qs, ok := in["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				s, _ = q["question"].(string)
			}
		}
	case "ExitPlanMode":
		s = "plan ready for review"
	case "ScheduleWakeup", "CronCreate":
		s = parseSchedule(tool, input).summary()
	}
	if s == "" {
		s = str("description")
	}
	if s == "" {
		s = string(input)
	}
	return truncate(strings.Join(strings.Fields(s), " "), previewLimit)
}

// toolResultText flattens tool_result content: a string, an array of blocks
// (text blocks joined) or an object (kept as JSON).
func toolResultText(c json.RawMessage) string {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return ""
	}
	switch c[0] {
	case '"':
		var s string
		_ = json.Unmarshal(c, &s)
		return s
	case '[':
		var blocks []ContentBlock
		if json.Unmarshal(c, &blocks) != nil {
			return string(c)
		}
		var b strings.Builder
		for _, blk := range blocks {
			if blk.Type == "text" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(blk.Text)
			}
		}
		return b.String()
	}
	return string(c)
}

func rawString(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}

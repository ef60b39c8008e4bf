package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Frame is one decoded line of the CLI's stdout. Each concrete type mirrors a
// frame family of the stream-json protocol. Fields the runner does not model
// are simply not decoded; frames whose type or subtype it does not know come
// back as *UnknownFrame with their raw bytes so nothing is ever dropped.
type Frame interface {
	// Kind is "type" or "type/subtype", e.g. "system/init", used for logging
	// and for once-per-kind bookkeeping.
	Kind() string
}

// Usage is the token usage carried by assistant messages and results.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// ContextTokens is what the request occupied in the context window: every
// input-side token plus what the model wrote, which becomes input next time.
func (u Usage) ContextTokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}

// ModelUsage is one entry of result.modelUsage (camelCase on the wire).
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`
	MaxOutputTokens          int64   `json:"maxOutputTokens"`
}

// ContentBlock is one block of message.content. Its Type selects which
// fields are meaningful; unknown block types keep their raw bytes.
type ContentBlock struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// thinking
	Thinking string `json:"thinking,omitempty"`
	// tool_use, server_tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result: content is a string, an array of blocks or an object.
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// image, document
	Source json.RawMessage `json:"source,omitempty"`
	Title  string          `json:"title,omitempty"`
}

// StopDetails explains a refusal stop.
type StopDetails struct {
	Type        string `json:"type"`
	Category    string `json:"category"`
	Explanation string `json:"explanation"`
}

// Message is the API message inside assistant and user frames. Content is
// kept raw because it is a string or an array depending on who wrote it.
type Message struct {
	ID          string          `json:"id"`
	Model       string          `json:"model"`
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	StopReason  *string         `json:"stop_reason"`
	StopDetails *StopDetails    `json:"stop_details"`
	Usage       *Usage          `json:"usage"`
}

// Blocks decodes the content array. A string content becomes one text block.
func (m *Message) Blocks() ([]ContentBlock, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || string(c) == "null" {
		return nil, nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, fmt.Errorf("decode string content: %w", err)
		}
		return []ContentBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []ContentBlock
	if err := json.Unmarshal(c, &blocks); err != nil {
		return blocks, fmt.Errorf("decode content blocks: %w", err)
	}
	return blocks, nil
}

// AssistantFrame is one content block of a model response (the CLI prints
// one frame per block, all with the same message.id), or a synthetic message
// the CLI wrote itself (API errors, refusals).
type AssistantFrame struct {
	Message           Message         `json:"message"`
	ParentToolUseID   *string         `json:"parent_tool_use_id"`
	SessionID         string          `json:"session_id"`
	UUID              string          `json:"uuid"`
	Aborted           bool            `json:"aborted"`
	Error             json.RawMessage `json:"error"`
	IsAPIErrorMessage bool            `json:"is_api_error_message"`
	APIErrorStatus    *int            `json:"api_error_status"`
}

func (*AssistantFrame) Kind() string { return "assistant" }

// UserFrame is a user-role message the CLI reports: tool results, interrupt
// markers, synthetic continuations and (with --replay-user-messages) echoes.
type UserFrame struct {
	Message         Message         `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
	IsSynthetic     bool            `json:"isSynthetic"`
	IsReplay        bool            `json:"isReplay"`
	ToolUseResult   json.RawMessage `json:"tool_use_result"`
	// RefusedMessageID marks the synthetic continuation the CLI sends
	// itself after safeguards stopped a response.
	RefusedMessageID string `json:"refused_message_id"`
	// ToolResultMeta says, per tool_result, how its permission check ended
	// and why a call did not run (CLI 2.1.328 and later).
	ToolResultMeta []ToolResultMeta `json:"tool_result_meta"`
}

// ToolResultMeta is one entry of a user frame's tool_result_meta.
type ToolResultMeta struct {
	ID string `json:"id"`
	// NonExecutionKind is why an is_error result carries no output of the
	// tool's own: user-rejected, permission-rule, automode-*, interrupted,
	// cancelled. Absent when the tool ran to completion.
	NonExecutionKind   string                  `json:"non_execution_kind"`
	PermissionDecision *PermissionDecisionMeta `json:"permission_decision"`
}

// PermissionDecisionMeta is how the permission check of a tool call ended.
type PermissionDecisionMeta struct {
	Decision   string `json:"decision"`    // accept | reject | cancelled
	Source     string `json:"source"`      // config, classifier, hook, user_temporary, user_permanent, user_reject, user_abort, …
	ReasonType string `json:"reason_type"` // rule, mode, classifier, hook, other, …; absent when a person answered
}

func (*UserFrame) Kind() string { return "user" }

// PermissionDenial is one entry of result.permission_denials.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// ResultFrame ends every turn. IsError, not Subtype, says whether it failed.
type ResultFrame struct {
	Subtype                   string                `json:"subtype"`
	IsError                   bool                  `json:"is_error"`
	Result                    string                `json:"result"`
	StopReason                json.RawMessage       `json:"stop_reason"`
	TerminalReason            string                `json:"terminal_reason"`
	NumTurns                  int                   `json:"num_turns"`
	TotalCostUSD              float64               `json:"total_cost_usd"`
	DurationMS                int64                 `json:"duration_ms"`
	DurationAPIMS             int64                 `json:"duration_api_ms"`
	Usage                     Usage                 `json:"usage"`
	ModelUsage                map[string]ModelUsage `json:"modelUsage"`
	ModelUsageSinceLastResult map[string]ModelUsage `json:"model_usage_since_last_result"`
	PermissionDenials         []PermissionDenial    `json:"permission_denials"`
	Errors                    []string              `json:"errors"`
	APIErrorStatus            *int                  `json:"api_error_status"`
	APIError                  json.RawMessage       `json:"api_error"`
	APIErrorType              string                `json:"api_error_type"`
	Origin                    json.RawMessage       `json:"origin"`
	LocalCommand              json.RawMessage       `json:"local_command"`
	SafetyStops               int                   `json:"safety_stops"`
	SessionID                 string                `json:"session_id"`
	UUID                      string                `json:"uuid"`
	UserMessageUUIDs          []string              `json:"user_message_uuids"`
}

func (*ResultFrame) Kind() string { return "result" }

// McpServer is one entry of system/init.mcp_servers.
type McpServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// CompactMetadata rides on system/compact_boundary.
type CompactMetadata struct {
	Trigger    string `json:"trigger"`
	PreTokens  int64  `json:"pre_tokens"`
	PostTokens int64  `json:"post_tokens"`
	DurationMS int64  `json:"duration_ms"`
}

// TaskUsage is a background task's running usage.
type TaskUsage struct {
	TotalTokens int64 `json:"total_tokens"`
	ToolUses    int64 `json:"tool_uses"`
	DurationMS  int64 `json:"duration_ms"`
}

// TaskPatch is system/task_updated.patch.
type TaskPatch struct {
	Status  string `json:"status"`
	EndTime int64  `json:"end_time"`
}

// TaskInfo is one entry of system/background_tasks_changed.tasks.
type TaskInfo struct {
	TaskID      string `json:"task_id"`
	TaskType    string `json:"task_type"`
	Description string `json:"description"`
}

// SystemFrame is every type:"system" frame. About twenty subtypes share
// this one flat struct (as they share field names on the wire), so a subtype
// the runner does not know still decodes its common fields.
type SystemFrame struct {
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`

	// init
	Cwd               string      `json:"cwd"`
	Model             string      `json:"model"`
	PermissionMode    string      `json:"permissionMode"`
	Tools             []string    `json:"tools"`
	McpServers        []McpServer `json:"mcp_servers"`
	APIKeySource      string      `json:"apiKeySource"`
	ClaudeCodeVersion string      `json:"claude_code_version"`

	// api_retry
	Attempt      int             `json:"attempt"`
	MaxRetries   int             `json:"max_retries"`
	RetryDelayMS int64           `json:"retry_delay_ms"`
	ErrorStatus  *int            `json:"error_status"`
	Error        json.RawMessage `json:"error"`

	// status (compaction and permission-mode edges)
	Status        *string `json:"status"`
	CompactResult string  `json:"compact_result"`
	CompactError  string  `json:"compact_error"`

	// compact_boundary
	CompactMetadata *CompactMetadata `json:"compact_metadata"`

	// notification (a hook's failure, among others): key names it, text is
	// written for the terminal.
	Key      string `json:"key"`
	Text     string `json:"text"`
	Priority string `json:"priority"`

	// informational, model_fallback, model_refusal_*
	Content               string  `json:"content"`
	Level                 string  `json:"level"`
	Trigger               string  `json:"trigger"`
	Direction             string  `json:"direction"`
	Scope                 string  `json:"scope"`
	OriginalModel         string  `json:"original_model"`
	FallbackModel         string  `json:"fallback_model"`
	APIRefusalCategory    *string `json:"api_refusal_category"`
	APIRefusalExplanation *string `json:"api_refusal_explanation"`

	// permission_denied
	ToolName           string `json:"tool_name"`
	ToolUseID          string `json:"tool_use_id"`
	Message            string `json:"message"`
	DecisionReasonType string `json:"decision_reason_type"`

	// task_* and background_tasks_changed
	TaskID          string     `json:"task_id"`
	TaskType        string     `json:"task_type"`
	Description     string     `json:"description"`
	IsBackgrounded  bool       `json:"is_backgrounded"`
	OwnedBySubagent bool       `json:"owned_by_subagent"`
	SubagentType    string     `json:"subagent_type"`
	Usage           *TaskUsage `json:"usage"`
	LastToolName    string     `json:"last_tool_name"`
	Patch           *TaskPatch `json:"patch"`
	OutputFile      string     `json:"output_file"`
	Summary         string     `json:"summary"`
	Tasks           []TaskInfo `json:"tasks"`

	// hook_started, hook_progress, hook_response
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent string `json:"hook_event"`
	Outcome   string `json:"outcome"`
	ExitCode  *int   `json:"exit_code"`

	// thinking_tokens
	EstimatedTokens      int64 `json:"estimated_tokens"`
	EstimatedTokensDelta int64 `json:"estimated_tokens_delta"`
}

func (f *SystemFrame) Kind() string { return "system/" + f.Subtype }

// RateLimitWindow is one entry of rate_limit_info.unifiedWindows.
type RateLimitWindow struct {
	Utilization float64 `json:"utilization"`
	ResetsAt    int64   `json:"resetsAt"`
	Status      string  `json:"status"`
}

// RateLimitInfo is the payload of rate_limit_event.
type RateLimitInfo struct {
	Status                string                     `json:"status"`
	ResetsAt              int64                      `json:"resetsAt"`
	RateLimitType         string                     `json:"rateLimitType"`
	Utilization           *float64                   `json:"utilization"`
	OverageStatus         string                     `json:"overageStatus"`
	OverageDisabledReason string                     `json:"overageDisabledReason"`
	IsUsingOverage        bool                       `json:"isUsingOverage"`
	UnifiedWindows        map[string]RateLimitWindow `json:"unifiedWindows"`
}

// RateLimitFrame is a quota snapshot (subscription auth only).
type RateLimitFrame struct {
	Info      RateLimitInfo `json:"rate_limit_info"`
	SessionID string        `json:"session_id"`
}

func (*RateLimitFrame) Kind() string { return "rate_limit_event" }

// ToolProgressFrame is a heartbeat for a long-running tool.
type ToolProgressFrame struct {
	ToolUseID          string  `json:"tool_use_id"`
	ToolName           string  `json:"tool_name"`
	ParentToolUseID    string  `json:"parent_tool_use_id"`
	ElapsedTimeSeconds float64 `json:"elapsed_time_seconds"`
}

func (*ToolProgressFrame) Kind() string { return "tool_progress" }

// StreamEventFrame carries one raw API stream event
// (--include-partial-messages).
type StreamEventFrame struct {
	Event           StreamEvent `json:"event"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
}

// StreamEvent is the subset of an Anthropic SSE event the runner reads.
type StreamEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
	ContentBlock struct {
		Type string `json:"type"`
		Name string `json:"name"`
		ID   string `json:"id"`
	} `json:"content_block"`
}

func (*StreamEventFrame) Kind() string { return "stream_event" }

// ControlRequestBody is what the CLI asks the host. For can_use_tool the
// tool fields are set; other subtypes keep their raw body.
type ControlRequestBody struct {
	Subtype                 string          `json:"subtype"`
	ToolName                string          `json:"tool_name"`
	DisplayName             string          `json:"display_name"`
	Input                   json.RawMessage `json:"input"`
	Description             string          `json:"description"`
	PermissionSuggestions   json.RawMessage `json:"permission_suggestions"`
	BlockedPath             string          `json:"blocked_path"`
	ToolUseID               string          `json:"tool_use_id"`
	RequiresUserInteraction bool            `json:"requires_user_interaction"`
	// DecisionReasonType says why the CLI asks: rule, mode,
	// subcommandResults, permissionPromptTool, hook, asyncAgent,
	// sandboxOverride, workingDir, safetyCheck, classifier or other.
	DecisionReasonType string `json:"decision_reason_type"`
	// DecisionReason is the deciding check's own text, when it has one
	// (it may carry ANSI escapes).
	DecisionReason string `json:"decision_reason"`
}

// ControlRequestFrame is a CLI → host request. Every one needs a
// control_response, or the CLI waits forever.
type ControlRequestFrame struct {
	RequestID RequestID          `json:"request_id"`
	Request   ControlRequestBody `json:"request"`
}

func (f *ControlRequestFrame) Kind() string { return "control_request/" + f.Request.Subtype }

// ControlCancelFrame withdraws a pending CLI → host request.
type ControlCancelFrame struct {
	RequestID RequestID `json:"request_id"`
}

func (*ControlCancelFrame) Kind() string { return "control_cancel_request" }

// ControlResponseBody answers a host → CLI request.
type ControlResponseBody struct {
	Subtype   string          `json:"subtype"`
	RequestID RequestID       `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
	ErrorCode string          `json:"error_code"`
}

// ControlResponseFrame is the CLI's answer to one of our control requests.
type ControlResponseFrame struct {
	Response ControlResponseBody `json:"response"`
}

func (*ControlResponseFrame) Kind() string { return "control_response" }

// CommandLifecycleFrame ties queue progress to a user message's uuid.
type CommandLifecycleFrame struct {
	CommandUUID MessageUUID `json:"command_uuid"`
	State       string      `json:"state"`
	SessionID   string      `json:"session_id"`
	// WakeupSource is set on "started" when a scheduler fire starts the
	// command: loop_wakeup (ScheduleWakeup) or schedule_wakeup (CronCreate
	// and other scheduled tasks). ScheduledFor (epoch ms) is the time a
	// loop_wakeup was set for.
	WakeupSource string  `json:"wakeup_source"`
	ScheduledFor float64 `json:"scheduled_for"`
}

func (*CommandLifecycleFrame) Kind() string { return "command_lifecycle" }

// ConversationResetFrame says the conversation was replaced (e.g. /clear).
type ConversationResetFrame struct {
	NewConversationID string `json:"new_conversation_id"`
	SessionID         string `json:"session_id"`
}

func (*ConversationResetFrame) Kind() string { return "conversation_reset" }

// UnknownFrame is a JSON line whose type (or system subtype) the runner does
// not model. Raw is a private copy of the line.
type UnknownFrame struct {
	Type    string
	Subtype string
	Raw     []byte
}

func (f *UnknownFrame) Kind() string {
	if f.Subtype != "" {
		return f.Type + "/" + f.Subtype
	}
	return f.Type
}

// ErrNotJSON marks a stdout line that is not a JSON object.
var ErrNotJSON = errors.New("line is not a JSON object")

// DecodeError reports a line that decoded only partly: a field had an
// unexpected JSON type. The frame returned alongside it holds every other
// field, so callers use it and surface the anomaly instead of dropping data.
type DecodeError struct {
	Kind string
	Err  error
}

func (e *DecodeError) Error() string { return fmt.Sprintf("decode %s frame: %v", e.Kind, e.Err) }
func (e *DecodeError) Unwrap() error { return e.Err }

// knownSystemSubtypes are the system subtypes the translator understands.
// Others decode as SystemFrame too but are reported as unknown, with raw
// bytes, so a new CLI feature is visible instead of silently ignored.
var knownSystemSubtypes = map[string]bool{
	"init": true, "api_retry": true, "status": true, "compact_boundary": true,
	"informational": true, "model_fallback": true, "model_refusal_fallback": true,
	"model_refusal_no_fallback": true, "permission_denied": true,
	"task_started": true, "task_progress": true, "task_updated": true,
	"task_notification": true, "background_tasks_changed": true,
	"hook_started": true, "hook_progress": true, "hook_response": true,
	"thinking_tokens": true, "notification": true,
}

// DecodeFrame decodes one stdout line. It never fails silently:
//   - a line that is not a JSON object returns ErrNotJSON (wrapped);
//   - an unknown type or system subtype returns an *UnknownFrame;
//   - a field of an unexpected JSON type returns the partly decoded frame
//     together with a *DecodeError.
//
// The line is not retained except by UnknownFrame, which copies it.
func DecodeFrame(line []byte) (Frame, error) {
	typ, subtype, ok := peekType(line)
	if !ok {
		if !json.Valid(line) {
			return nil, fmt.Errorf("decode frame: %w", ErrNotJSON)
		}
		// Valid JSON the fast scanner could not read (escaped type name,
		// not an object, …): fall back to the full decoder.
		var env struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
		}
		if err := json.Unmarshal(line, &env); err != nil {
			return nil, fmt.Errorf("decode frame: %w", ErrNotJSON)
		}
		typ, subtype = env.Type, env.Subtype
	}
	var f Frame
	switch typ {
	case "system":
		if !knownSystemSubtypes[subtype] {
			return unknown(typ, subtype, line), nil
		}
		f = &SystemFrame{}
	case "assistant":
		f = &AssistantFrame{}
	case "user":
		f = &UserFrame{}
	case "result":
		f = &ResultFrame{}
	case "rate_limit_event":
		f = &RateLimitFrame{}
	case "tool_progress":
		f = &ToolProgressFrame{}
	case "stream_event":
		f = &StreamEventFrame{}
	case "control_request":
		f = &ControlRequestFrame{}
	case "control_cancel_request":
		f = &ControlCancelFrame{}
	case "control_response":
		f = &ControlResponseFrame{}
	case "command_lifecycle":
		f = &CommandLifecycleFrame{}
	case "conversation_reset":
		f = &ConversationResetFrame{}
	default:
		return unknown(typ, subtype, line), nil
	}
	if err := json.Unmarshal(line, f); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			// encoding/json skips the offending field and fills the rest.
			return f, &DecodeError{Kind: f.Kind(), Err: err}
		}
		return nil, fmt.Errorf("decode %s frame: %w", typ, err)
	}
	return f, nil
}

func unknown(typ, subtype string, line []byte) *UnknownFrame {
	return &UnknownFrame{Type: typ, Subtype: subtype, Raw: bytes.Clone(line)}
}

package runner

import (
	"encoding/json"
	"time"
)

// SessionID identifies a Claude conversation; it survives process restarts
// via --resume.
type SessionID string

// RequestID identifies a control request, in either direction.
type RequestID string

// MessageUUID identifies a user message we wrote; command_lifecycle frames
// and result.user_message_uuids refer to it.
type MessageUUID string

// ToolUseID identifies one tool call of the model.
type ToolUseID string

// PermissionMode is the CLI's permission mode.
type PermissionMode string

// The permission modes the CLI accepts.
const (
	ModeDefault           PermissionMode = "default"
	ModeAcceptEdits       PermissionMode = "acceptEdits"
	ModePlan              PermissionMode = "plan"
	ModeBypassPermissions PermissionMode = "bypassPermissions"
	ModeDontAsk           PermissionMode = "dontAsk"
)

// Valid reports whether the CLI accepts the mode.
func (m PermissionMode) Valid() bool {
	switch m {
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypassPermissions, ModeDontAsk:
		return true
	}
	return false
}

// Event is what the runner tells its consumer. The bridge renders from these
// alone; it never sees JSON frames. Fields newer than the first replay
// goldens carry omitzero tags, so a golden shows them only where a frame
// set them.
type Event interface{ isEvent() }

// TurnStarted is system/init: a turn began (the CLI prints it per turn).
type TurnStarted struct {
	SessionID      SessionID
	Model          string
	PermissionMode PermissionMode
	Cwd            string
	Tools          []string
	Version        string
	// Wakeup is set when a scheduler fire started the turn rather than a
	// message: WakeupLoop or WakeupScheduled.
	Wakeup WakeupSource `json:",omitzero"`
	// ScheduledFor is the time a loop wake-up was set for (zero if unknown).
	ScheduledFor time.Time `json:",omitzero"`
	// McpServers are the MCP servers the CLI was configured with, and how
	// their start went ("connected", "failed", "needs-auth", "pending").
	McpServers []McpServer `json:",omitempty"`
}

// WakeupSource is what fired a turn nobody typed.
type WakeupSource string

// Wake-up sources (command_lifecycle.wakeup_source).
const (
	WakeupLoop      WakeupSource = "loop_wakeup"     // a ScheduleWakeup fired
	WakeupScheduled WakeupSource = "schedule_wakeup" // a CronCreate job or another scheduled task fired
)

// AssistantText is a text block of the model's answer (or a synthetic one
// the CLI wrote, e.g. an API error text).
type AssistantText struct {
	MessageID       string
	Text            string
	ParentToolUseID ToolUseID // set when a subagent wrote it
	Aborted         bool      // cut short by an interrupt
	Synthetic       bool      // written by the CLI, not the model
}

// TextDelta is streamed answer text (--include-partial-messages).
type TextDelta struct {
	MessageID string
	Text      string
}

// Thinking is a thinking block.
type Thinking struct {
	Text            string
	ParentToolUseID ToolUseID
}

// ToolStarted is a tool_use (or server_tool_use) block.
type ToolStarted struct {
	ID       ToolUseID
	Name     string
	Input    json.RawMessage
	Summary  string // short human summary of the input
	ParentID ToolUseID
	Server   bool // server_tool_use: runs on the API side
	// Schedule is set for ScheduleWakeup and CronCreate: the wake-up Claude
	// asked for.
	Schedule *Schedule `json:",omitzero"`
}

// Schedule is a wake-up Claude arranged for itself: a ScheduleWakeup delay
// or a CronCreate job.
type Schedule struct {
	Tool      string        // ScheduleWakeup | CronCreate
	Delay     time.Duration // ScheduleWakeup: after how long
	Cron      string        // CronCreate: 5-field expression in the host's local time
	Recurring bool          // CronCreate: fires on every match, not once
	Stop      bool          // ScheduleWakeup stop:true ends the loop instead
	Reason    string        // ScheduleWakeup: one short sentence for the user
	Prompt    string        // what the wake-up will send
}

// ToolFinished is a tool_result for an earlier ToolStarted.
type ToolFinished struct {
	ID       ToolUseID
	Name     string
	OK       bool
	Preview  string // first part of the result text
	ParentID ToolUseID
	// Permission is how the CLI's permission check for the call ended
	// (nil when the CLI did not say).
	Permission *PermissionDecision `json:",omitzero"`
	// NotRun is why the call produced no output of its own
	// (tool_result_meta.non_execution_kind): user-rejected,
	// permission-rule, automode-*, interrupted, cancelled; "" if it ran.
	NotRun string `json:",omitzero"`
	// FiresAt is when a ScheduleWakeup or CronCreate call will next fire,
	// from its result; zero otherwise.
	FiresAt time.Time `json:",omitzero"`
	// ScheduleText is CronCreate's own reading of its schedule
	// ("Every 5 minutes"), from its result.
	ScheduleText string `json:",omitzero"`
	// CronJobs is the job a CronCreate call made, or the jobs a CronList
	// call listed, from its result.
	CronJobs []CronJob `json:",omitempty"`
	// Links are the resources an MCP tool returned by reference
	// (tool_use_result.resourceLinks, CLI 2.1.257 and later).
	Links []ResourceLink `json:",omitempty"`
}

// ResourceLink is one resource_link an MCP tool returned: a name and a URI
// (a file:// URI for a file on the CLI's machine).
type ResourceLink struct {
	Name     string `json:"name"`
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Title    string `json:"title,omitempty"`
}

// PermissionDecision is how the permission check of one tool call ended.
type PermissionDecision struct {
	Decision   string // accept | reject | cancelled
	Source     string // config, classifier, hook, user_temporary, user_permanent, user_reject, user_abort, …
	ReasonType string // when the check decided by itself: rule, mode, classifier, hook, other, …
}

// Question is one AskUserQuestion question.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// QuestionOption is one choice of a Question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// PlanApproval is ExitPlanMode's input: the plan the CLI read from the plan
// file (empty when the model wrote none).
type PlanApproval struct {
	Plan     string
	PlanFile string
}

// ApprovalRequested is a can_use_tool control request. The consumer must
// answer it with Session.Respond (or it is denied on timeout by the bridge).
type ApprovalRequested struct {
	RequestID   RequestID
	ToolUseID   ToolUseID
	Tool        string
	DisplayName string
	Input       json.RawMessage
	Suggestions json.RawMessage // permission_suggestions, raw; echo back to always-allow
	BlockedPath string
	Description string
	Summary     string
	// Interactive is set for requests that need the user's input rather
	// than a yes/no (AskUserQuestion, ExitPlanMode).
	Interactive bool
	Questions   []Question    // AskUserQuestion
	Plan        *PlanApproval // ExitPlanMode
	// ReasonType is why the CLI asks (decision_reason_type): rule, mode,
	// subcommandResults, permissionPromptTool, hook, asyncAgent,
	// sandboxOverride, workingDir, safetyCheck, classifier or other.
	ReasonType string `json:",omitzero"`
	// Reason is the deciding check's own words, when it gave any.
	Reason string `json:",omitzero"`
}

// ApprovalWithdrawn is control_cancel_request: the CLI no longer needs an
// answer (after an interrupt); answering it later is ignored by the CLI.
type ApprovalWithdrawn struct{ RequestID RequestID }

// APIRetry is system/api_retry: the CLI will retry an API call.
type APIRetry struct {
	Attempt    int
	MaxRetries int
	Delay      time.Duration
	Status     int // HTTP status, 0 when there was none (connection failure)
	Error      string
}

// RateLimit is a rate_limit_event (subscription auth only).
type RateLimit struct {
	Status      string // allowed | allowed_warning | rejected
	WindowType  string // five_hour, seven_day, …
	ResetsAt    time.Time
	Utilization float64 // 0..1, -1 when unknown
	Overage     string
	// Windows is every subscription window the event reports
	// (unifiedWindows), sorted by type. A window can warn while the
	// top-level status still says "allowed".
	Windows []LimitWindow `json:",omitzero"`
}

// LimitWindow is one subscription window's state.
type LimitWindow struct {
	Type        string // five_hour, seven_day, …
	Status      string // allowed | allowed_warning | rejected; "" when not reported
	Utilization float64
	ResetsAt    time.Time
}

// CompactionStarted is system/status "compacting".
type CompactionStarted struct{}

// CompactionFinished is system/compact_boundary.
type CompactionFinished struct {
	Trigger    string // manual | auto
	PreTokens  int64
	PostTokens int64
}

// CompactionFailed is a status frame with compact_result "failed".
type CompactionFailed struct{ Error string }

// NoticeKind classifies a Notice.
type NoticeKind string

// Notice kinds.
const (
	NoticeInfo              NoticeKind = "info"             // system/informational
	NoticeSafeguard         NoticeKind = "safeguard"        // a response stopped by safeguards (stop_reason refusal)
	NoticeRefusalFallback   NoticeKind = "refusal_fallback" // retried on another model after a refusal
	NoticeRefusalNoFallback NoticeKind = "refusal_no_fallback"
	NoticeModelFallback     NoticeKind = "model_fallback" // e.g. overloaded → fallback model
)

// Notice is an informational banner, a safeguard stop, or a model fallback.
type Notice struct {
	Kind          NoticeKind
	Level         string
	Text          string
	OriginalModel string
	FallbackModel string
	Category      string
}

// PermissionModeChanged is a permission-mode edge (system/status).
type PermissionModeChanged struct{ Mode PermissionMode }

// PermissionDenied is system/permission_denied: a tool was refused without
// asking anybody (dontAsk mode, or no prompt tool).
type PermissionDenied struct {
	Tool      string
	ToolUseID ToolUseID
	Reason    string
	Message   string
}

// TaskStarted is a background task (long Bash, subagent, Monitor) starting.
type TaskStarted struct {
	TaskID       string
	ToolUseID    ToolUseID
	Description  string
	TaskType     string
	Backgrounded bool
}

// TaskProgress is a running task's progress.
type TaskProgress struct {
	TaskID      string
	Description string
	LastTool    string
	Tokens      int64
	ToolUses    int64
}

// TaskUpdated is system/task_updated.
type TaskUpdated struct {
	TaskID string
	Status string
}

// TaskFinished is system/task_notification.
type TaskFinished struct {
	TaskID     string
	ToolUseID  ToolUseID
	Status     string // completed | failed | stopped
	Summary    string
	OutputFile string
}

// BackgroundTasks is a full snapshot of the live background tasks.
type BackgroundTasks struct{ Tasks []TaskInfo }

// MessageState is a user message's position in the CLI's queue.
type MessageState string

// Message states from command_lifecycle.
const (
	MessageQueued    MessageState = "queued"
	MessageStarted   MessageState = "started"
	MessageCompleted MessageState = "completed"
	MessageCancelled MessageState = "cancelled"
)

// MessageLifecycle is command_lifecycle for a message we sent.
type MessageLifecycle struct {
	UUID  MessageUUID
	State MessageState
	// Wakeup is set when a scheduler fire, not a message we wrote, is
	// being started; UUID is then one we never sent.
	Wakeup       WakeupSource `json:",omitzero"`
	ScheduledFor time.Time    `json:",omitzero"`
}

// TurnCompleted is a result frame.
type TurnCompleted struct {
	SessionID      SessionID
	OK             bool // from is_error, never from subtype
	Subtype        string
	TerminalReason string
	StopReason     string
	Answer         string // result text, or the last assistant text
	// CostUSD is this turn's own cost. TotalCostUSD is the CLI's running
	// total, which is cumulative per process and continues across --resume.
	CostUSD        float64
	TotalCostUSD   float64
	Usage          Usage
	ContextTokens  int64
	ContextWindow  int64
	ContextPercent float64 // 0 when the window is unknown
	Duration       time.Duration
	APIDuration    time.Duration
	NumTurns       int
	APIErrorStatus int    // 0 when none
	APIError       string // the CLI's typed kind, e.g. usage_limit_reached
	Denials        []PermissionDenial
	Errors         []string
	Messages       []MessageUUID // the user messages this turn answered
	Origin         string        // origin.kind; "" for turns we caused
	LocalCommand   bool          // e.g. /compact: no agent loop ran
	// Model is the model that wrote the turn's last answer text ("" when
	// no model wrote any), which differs from the session's after a
	// fallback.
	Model string `json:",omitzero"`
	// SafetyStops counts the responses safeguards stopped in this turn:
	// the growth of the CLI's running safety_stops total.
	SafetyStops int `json:",omitzero"`
	// Leaf is the uuid of the turn's last assistant message in the
	// session's own line (not a subagent's), which the session's transcript
	// gives its entry: the leaf the CLI names there when it exits, which a
	// later resume goes on from when the session forked; "" when the turn
	// had none.
	Leaf string `json:",omitzero"`
}

// Aborted reports whether the turn was interrupted.
func (t TurnCompleted) Aborted() bool {
	return t.TerminalReason == "aborted_streaming" || t.TerminalReason == "aborted_tools"
}

// ConversationReset means the CLI replaced the conversation (e.g. /clear).
type ConversationReset struct{ NewConversationID string }

// SessionRestarted means the session could not be resumed and a new one was
// started in its place ("No conversation found").
type SessionRestarted struct {
	Previous SessionID
	Current  SessionID
	Reason   string
}

// ProcessStarted is a CLI process spawning for the session.
type ProcessStarted struct {
	PID     int
	Resumed bool
}

// ProcessExited is the CLI process ending, for any reason.
type ProcessExited struct {
	ExitCode   int    // -1 when killed by a signal
	Signal     string // e.g. "killed"; "" when it exited
	StderrTail string
	Requested  bool // we asked it to stop (idle close, /new, shutdown)
	// Pending is what the process still waited for between turns when it
	// exited (background tasks, wake-ups): it ended with it.
	Pending Background `json:",omitzero"`
	// Err is why untether ended a process nobody asked to stop:
	// ErrLineTooLong, ErrInternal (a recovered panic). nil otherwise.
	Err error
}

// Unknown is a frame the runner does not model, kept raw.
type Unknown struct {
	Kind string
	Raw  []byte
	Err  error // set when a known frame decoded only partly
}

// Warning is a stdout line that is not JSON at all.
type Warning struct {
	Line []byte
	Err  error
}

func (TurnStarted) isEvent()           {}
func (AssistantText) isEvent()         {}
func (TextDelta) isEvent()             {}
func (Thinking) isEvent()              {}
func (ToolStarted) isEvent()           {}
func (ToolFinished) isEvent()          {}
func (ApprovalRequested) isEvent()     {}
func (ApprovalWithdrawn) isEvent()     {}
func (APIRetry) isEvent()              {}
func (RateLimit) isEvent()             {}
func (CompactionStarted) isEvent()     {}
func (CompactionFinished) isEvent()    {}
func (CompactionFailed) isEvent()      {}
func (Notice) isEvent()                {}
func (PermissionModeChanged) isEvent() {}
func (PermissionDenied) isEvent()      {}
func (TaskStarted) isEvent()           {}
func (TaskProgress) isEvent()          {}
func (TaskUpdated) isEvent()           {}
func (TaskFinished) isEvent()          {}
func (BackgroundTasks) isEvent()       {}
func (MessageLifecycle) isEvent()      {}
func (TurnCompleted) isEvent()         {}
func (ConversationReset) isEvent()     {}
func (SessionRestarted) isEvent()      {}
func (ProcessStarted) isEvent()        {}
func (ProcessExited) isEvent()         {}
func (Unknown) isEvent()               {}
func (Warning) isEvent()               {}

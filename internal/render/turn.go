package render

import (
	"time"

	"github.com/untether/untether/internal/runner"
)

// Bounds on what a Turn keeps. A turn can run for hours and make thousands
// of tool calls; the progress message only ever shows the last few rows, the
// tail of the streamed text and a handful of notes, so that is all a Turn
// retains. Everything else is reduced to counts.
const (
	// maxKeptRows is how many of the latest tool rows are kept; it is also
	// the largest useful [ProgressOptions.MaxRows].
	maxKeptRows = 64
	// maxTextTail is how much streamed answer text the progress message
	// shows, in UTF-16 units.
	maxTextTail = 1500
	// textTailBytes is how much of the streamed text is retained: enough
	// bytes for maxTextTail units even if every rune takes four bytes.
	textTailBytes = 4 * maxTextTail
	// maxThinkingTail is the verbose thinking excerpt, in UTF-16 units.
	maxThinkingTail = 300
	// thinkingTailBytes is the thinking text retained, in bytes.
	thinkingTailBytes = 4 * maxThinkingTail
	// maxNotices is how many safeguard/fallback/info notices are kept:
	// enough for one of each kind.
	maxNotices = 5
	// maxTasks is how many background tasks are tracked; finished ones are
	// forgotten first.
	maxTasks = 8
	// maxQueued bounds the set of queued message ids; beyond it the count
	// saturates, which is still the right thing to show.
	maxQueued = 32
	// maxPending bounds the pending approvals tracked per turn.
	maxPending = 16
	// maxAsked bounds the approval requests remembered per turn, to say
	// who refused a tool call.
	maxAsked = 32
)

// Phase is where a turn stands, as the user should understand it. The
// waiting states are explicit so that "is it stuck?" has an answer on the
// screen: waiting for you, retrying the API, or compacting.
type Phase uint8

// Phases, in no particular order. The last three are terminal.
const (
	PhaseStarting         Phase = iota // no output from Claude yet
	PhaseRunning                       // Claude is working
	PhaseAwaitingApproval              // a tool call waits for the user's decision
	PhaseRetrying                      // an API call failed and will be retried
	PhaseCompacting                    // the conversation is being compacted
	PhaseDone                          // finished successfully
	PhaseFailed                        // finished with an error, or the process died
	PhaseCancelled                     // interrupted
)

// String returns the phase's label as shown in the progress header.
func (p Phase) String() string {
	switch p {
	case PhaseStarting:
		return "Starting"
	case PhaseRunning:
		return "Working"
	case PhaseAwaitingApproval:
		return "Waiting for approval"
	case PhaseRetrying:
		return "Retrying"
	case PhaseCompacting:
		return "Compacting"
	case PhaseDone:
		return "Done"
	case PhaseFailed:
		return "Failed"
	case PhaseCancelled:
		return "Cancelled"
	}
	return "Unknown"
}

// phaseLabel is the icon and the words of a phase in t's header: an
// interruption the user did not ask for is not "Cancelled".
func (t *Turn) phaseLabel(p Phase) (icon, label string) {
	if p == PhaseCancelled && t.StoppedForRestart {
		return "⏸", "Stopped for a restart"
	}
	return p.icon(), p.String()
}

// Finished reports whether the phase is terminal.
func (p Phase) Finished() bool {
	return p == PhaseDone || p == PhaseFailed || p == PhaseCancelled
}

// icon is the glyph in front of the phase label.
func (p Phase) icon() string {
	switch p {
	case PhaseStarting:
		return "🕐"
	case PhaseRunning:
		return "⚙️"
	case PhaseAwaitingApproval:
		return "✋"
	case PhaseRetrying:
		return "🔁"
	case PhaseCompacting:
		return "🗜"
	case PhaseDone:
		return "✅"
	case PhaseFailed:
		return "❌"
	case PhaseCancelled:
		return "⏹"
	}
	return "•"
}

// ToolStatus is the state of one tool call.
type ToolStatus uint8

// Tool call states.
const (
	ToolRunning ToolStatus = iota
	ToolDone
	ToolFailed
)

// ToolRow is one tool call as the progress message lists it.
type ToolRow struct {
	ID       runner.ToolUseID
	Name     string
	Summary  string           // one line, already bounded by the runner
	ParentID runner.ToolUseID // the Task/Agent call a subagent made this call for
	Depth    int              // 0 for the main agent, 1 for its subagents, …
	Status   ToolStatus
	Server   bool      // runs on the API side (web search)
	Started  time.Time // when ToolStarted was applied
	Error    string    // failed calls: the start of the result
	// Why says why the permission check let the call run or not, e.g.
	// "blocked by a permission rule"; "" when there is nothing to explain.
	Why string
	// Schedule, FiresAt and ScheduleText describe a ScheduleWakeup or
	// CronCreate call, which is shown as the wake-up it arranges.
	Schedule     *runner.Schedule
	FiresAt      time.Time
	ScheduleText string
}

// compaction is the state of the latest context compaction.
type compaction uint8

const (
	compactionNone compaction = iota
	compactionRunning
	compactionDone
	compactionFailed
)

// Turn is the render-relevant state of one turn, accumulated from runner
// events by [Turn.Apply]. Its memory is bounded whatever the length of the
// turn: it keeps the latest [maxKeptRows] tool rows, a tail of the streamed
// text and a few notes, and counts the rest.
//
// The exported fields are read-only for callers. A Turn is not safe for
// concurrent use; the chat actor that applies events also renders.
type Turn struct {
	SessionID runner.SessionID
	Model     string
	Mode      runner.PermissionMode
	// Project names where the turn runs ("api", "api · feature"), shown
	// in the header when set (a daemon with several projects).
	Project string
	// StartedAt is when the turn began: [NewTurn]'s argument, else the
	// time of the first applied event.
	StartedAt time.Time
	// LastEventAt is when the latest event was applied.
	LastEventAt time.Time
	// FinishedAt is when the turn completed or its process died.
	FinishedAt time.Time
	// Steps counts tool calls started, subagents' included.
	Steps int
	// Succeeded and Failed count finished tool calls.
	Succeeded, Failed int
	// Result is the turn's result frame, once it has arrived.
	Result *runner.TurnCompleted
	// Exit is set when the CLI process ended before the turn completed.
	Exit *runner.ProcessExited
	// StoppedForRestart says a restart (a drain that could not wait, or an
	// approval it had to stop), not the user, interrupted the turn: its
	// header and its stopped tool calls say so.
	StoppedForRestart bool

	active bool // Claude has produced something

	rows    [maxKeptRows]ToolRow // ring buffer of the latest rows
	rowHead int                  // index of the oldest row
	rowLen  int

	text      tailBuf
	textDone  bool   // the latest text block is complete; a delta starts a new one
	textBlock uint64 // counts the text blocks begun, so a new one can be told apart
	thinking  tailBuf

	retry    runner.APIRetry
	retrying bool
	retries  int // API retries in this turn

	limits []runner.LimitWindow // subscription windows warning or rejecting now

	links []runner.ResourceLink // resources MCP tools returned by reference (links.go)

	compaction  compaction
	compactPre  int64
	compactPost int64
	compactErr  string
	compactTrig string

	notices []runner.Notice // oldest first, at most maxNotices

	denials    int
	lastDenial runner.PermissionDenied

	// asked lists the tool calls this turn asked the user about, so a
	// refusal can say whether the user or a rule refused it.
	asked []askedTool

	wakeup    runner.WakeupSource // a scheduler fire started the turn
	wakeupFor time.Time

	tasks    []taskState
	queued   []runner.MessageUUID
	pending  []pendingApproval
	sessNote string

	rev uint64
	// restRev is rev without the changes that only touched the streamed
	// text (see [Turn.FingerprintWithoutText]).
	restRev uint64
}

// NewTurn returns an empty Turn that started at now, typically when the
// user's message was accepted, so the elapsed time shown includes any wait
// before Claude's first frame.
func NewTurn(now time.Time) *Turn {
	return &Turn{StartedAt: now}
}

// Fingerprint changes whenever [Turn.Apply] (or [Turn.Resolve]) changed
// anything a render could show. Two renders of the same Turn with equal
// fingerprints, equal options and the same elapsed second are identical, so
// the caller can skip the edit. Fingerprints of different Turns are not
// comparable.
func (t *Turn) Fingerprint() uint64 { return t.rev }

// Phase derives the turn's phase from its state. A result or a process exit
// wins over everything; otherwise waiting for the user wins over retrying,
// which wins over compacting, because that is what the user must act on or
// wait for first.
func (t *Turn) Phase() Phase {
	switch {
	case t.Result != nil:
		if t.Result.Aborted() {
			return PhaseCancelled
		}
		if t.Result.OK {
			return PhaseDone
		}
		return PhaseFailed
	case t.Exit != nil:
		if t.Exit.Requested {
			return PhaseCancelled
		}
		return PhaseFailed
	case len(t.pending) > 0:
		return PhaseAwaitingApproval
	case t.retrying:
		return PhaseRetrying
	case t.compaction == compactionRunning:
		return PhaseCompacting
	case t.active:
		return PhaseRunning
	}
	return PhaseStarting
}

// Running is the number of tool calls started and not yet finished.
func (t *Turn) Running() int {
	return max(0, t.Steps-t.Succeeded-t.Failed)
}

// Rows returns the kept tool rows, oldest first (at most the latest 64).
func (t *Turn) Rows() []ToolRow {
	out := make([]ToolRow, t.rowLen)
	for i := range out {
		out[i] = *t.row(i)
	}
	return out
}

// QueuedMessages is the number of user messages the CLI has queued behind
// this turn.
func (t *Turn) QueuedMessages() int { return len(t.queued) }

// row returns the i-th kept row, oldest first.
func (t *Turn) row(i int) *ToolRow {
	return &t.rows[(t.rowHead+i)%maxKeptRows]
}

// Apply folds one runner event into the turn. now is the time the event was
// received; the Turn has no clock of its own.
func (t *Turn) Apply(ev runner.Event, now time.Time) {
	active, retrying := t.active, t.retrying
	if !t.applyEvent(ev, now) {
		return
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	t.LastEventAt = now
	t.rev++
	if !onlyText(ev) || t.active != active || t.retrying != retrying {
		t.restRev++
	}
}

// applyEvent does the work of Apply and reports whether anything a render
// could show changed.
func (t *Turn) applyEvent(ev runner.Event, now time.Time) bool {
	switch e := ev.(type) {
	case runner.TurnStarted:
		if t.Result != nil || t.Exit != nil {
			// A Turn reused for the next turn starts over rather than
			// showing the previous turn's rows as this one's.
			*t = Turn{StartedAt: now, rev: t.rev, restRev: t.restRev, textBlock: t.textBlock + 1,
				text: tailBuf{b: t.text.b[:0]}, thinking: tailBuf{b: t.thinking.b[:0]}}
		}
		t.SessionID, t.Model, t.Mode = e.SessionID, e.Model, e.PermissionMode
		if e.Wakeup != "" {
			t.wakeup, t.wakeupFor = e.Wakeup, e.ScheduledFor
		}
	case runner.AssistantText:
		t.assistantFrame()
		if e.ParentToolUseID != "" {
			return true // a subagent's text is not the answer
		}
		if t.textDone {
			t.textBlock++ // a whole block that was not streamed
		}
		t.text.set(e.Text, textTailBytes)
		t.textDone = true
	case runner.TextDelta:
		t.assistantFrame()
		if t.textDone {
			t.text.reset()
			t.textDone = false
			t.textBlock++
		}
		t.text.add(e.Text, textTailBytes)
	case runner.Thinking:
		t.assistantFrame()
		if e.ParentToolUseID == "" {
			t.thinking.set(e.Text, thinkingTailBytes)
		}
	case runner.ToolStarted:
		t.assistantFrame()
		t.toolStarted(e, now)
	case runner.ToolFinished:
		t.toolFinished(e)
	case runner.ApprovalRequested:
		t.active = true
		if len(t.pending) < maxPending {
			tool := e.DisplayName
			if tool == "" {
				tool = e.Tool
			}
			t.pending = append(t.pending, pendingApproval{RequestID: e.RequestID, ToolUseID: e.ToolUseID, Tool: tool})
		}
		if len(t.asked) == maxAsked {
			t.asked = append(t.asked[:0], t.asked[1:]...)
		}
		t.asked = append(t.asked, askedTool{RequestID: e.RequestID, ToolUseID: e.ToolUseID})
	case runner.ApprovalWithdrawn:
		return t.Resolve(e.RequestID)
	case runner.APIRetry:
		t.retry, t.retrying = e, true
		t.retries++
	case runner.RateLimit:
		return t.applyRateLimit(e)
	case runner.CompactionStarted:
		t.compaction = compactionRunning
	case runner.CompactionFinished:
		t.compaction, t.compactPre, t.compactPost, t.compactTrig = compactionDone, e.PreTokens, e.PostTokens, e.Trigger
	case runner.CompactionFailed:
		t.compaction, t.compactErr = compactionFailed, e.Error
	case runner.Notice:
		return t.applyNotice(e)
	case runner.PermissionModeChanged:
		if t.Mode == e.Mode {
			return false
		}
		t.Mode = e.Mode
	case runner.PermissionDenied:
		t.denials++
		t.lastDenial = e
		if r := t.findRow(e.ToolUseID); r != nil && r.Why == "" {
			r.Why = deniedWhy(e.Reason, t.Mode)
		}
	case runner.TaskStarted:
		t.task(e.TaskID).Description = e.Description
	case runner.TaskProgress:
		s := t.task(e.TaskID)
		if e.Description != "" {
			s.Description = e.Description
		}
		s.LastTool, s.ToolUses = e.LastTool, e.ToolUses
	case runner.TaskUpdated:
		t.task(e.TaskID).Status = e.Status
	case runner.TaskFinished:
		s := t.task(e.TaskID)
		s.Status, s.Summary = e.Status, e.Summary
		if s.Status == "" {
			s.Status = "completed"
		}
	case runner.BackgroundTasks:
		t.applyBackgroundTasks(e)
	case runner.MessageLifecycle:
		return t.applyLifecycle(e)
	case runner.TurnCompleted:
		r := e
		t.Result = &r
		if e.Model != "" {
			t.Model = e.Model // after a fallback, the model that answered
		}
		t.FinishedAt = now
		t.retrying = false
		t.pending = t.pending[:0]
		if t.compaction == compactionRunning {
			t.compaction = compactionNone
		}
	case runner.ProcessExited:
		if t.Result != nil {
			return false // the turn was over; an idle close is not news
		}
		x := e
		t.Exit = &x
		t.FinishedAt = now
		t.retrying = false
		t.pending = t.pending[:0]
	case runner.SessionRestarted:
		t.sessNote = "The previous session could not be resumed; Claude started a new one."
	case runner.ConversationReset:
		t.sessNote = "The conversation was cleared."
	default:
		// ProcessStarted, Unknown and Warning change nothing visible.
		return false
	}
	return true
}

// assistantFrame notes output from the model, which ends any API retry.
func (t *Turn) assistantFrame() {
	t.active = true
	t.retrying = false
}

func (t *Turn) toolStarted(e runner.ToolStarted, now time.Time) {
	t.Steps++
	depth := 0
	if e.ParentID != "" {
		depth = 1
		if p := t.findRow(e.ParentID); p != nil {
			depth = p.Depth + 1
		}
	}
	var r *ToolRow
	if t.rowLen < maxKeptRows {
		r = t.row(t.rowLen)
		t.rowLen++
	} else {
		r = &t.rows[t.rowHead]
		t.rowHead = (t.rowHead + 1) % maxKeptRows
	}
	*r = ToolRow{ID: e.ID, Name: e.Name, Summary: e.Summary, ParentID: e.ParentID, Depth: depth,
		Server: e.Server, Started: now, Schedule: e.Schedule}
	// A server tool (web search) runs on the API side; the runner ends
	// its row from the result block that follows it in the same message,
	// which says whether it failed.
}

func (t *Turn) toolFinished(e runner.ToolFinished) {
	r := t.findRow(e.ID)
	if r != nil && r.Status != ToolRunning {
		return // a duplicate result; counted already
	}
	t.addLinks(e.Links)
	if e.OK {
		t.Succeeded++
	} else {
		t.Failed++
	}
	if r != nil {
		if e.OK {
			r.Status = ToolDone
		} else {
			r.Status, r.Error = ToolFailed, e.Preview
		}
		if why := t.permissionWhy(e); why != "" {
			r.Why = why
		}
		r.FiresAt, r.ScheduleText = e.FiresAt, e.ScheduleText
	}
	// A tool that finishes was evidently decided on.
	for i, p := range t.pending {
		if p.ToolUseID != "" && p.ToolUseID == e.ID {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
}

// findRow returns the kept row for id, searching newest first because
// results usually follow their calls closely.
func (t *Turn) findRow(id runner.ToolUseID) *ToolRow {
	for i := t.rowLen - 1; i >= 0; i-- {
		if r := t.row(i); r.ID == id {
			return r
		}
	}
	return nil
}

func (t *Turn) applyNotice(e runner.Notice) bool {
	if n := len(t.notices); n > 0 && t.notices[n-1] == e {
		return false // the CLI repeats some notices verbatim
	}
	if len(t.notices) == maxNotices {
		copy(t.notices, t.notices[1:])
		t.notices = t.notices[:maxNotices-1]
	}
	t.notices = append(t.notices, e)
	if e.Kind == runner.NoticeModelFallback && e.FallbackModel != "" {
		t.Model = e.FallbackModel
	}
	return true
}

func (t *Turn) applyLifecycle(e runner.MessageLifecycle) bool {
	idx := -1
	for i, u := range t.queued {
		if u == e.UUID {
			idx = i
			break
		}
	}
	switch {
	case e.State == runner.MessageQueued && idx < 0:
		if len(t.queued) == maxQueued {
			return false
		}
		t.queued = append(t.queued, e.UUID)
	case e.State != runner.MessageQueued && idx >= 0:
		t.queued = append(t.queued[:idx], t.queued[idx+1:]...)
	default:
		return false
	}
	return true
}

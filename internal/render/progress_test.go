package render_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// script builds a hand-written event sequence with explicit timing; a nil
// event marks a snapshot.
type script struct {
	now time.Time
	evs []timedEvent
}

func newScript() *script { return &script{now: base} }

// at advances the clock by d and appends the events.
func (s *script) at(d time.Duration, evs ...runner.Event) *script {
	s.now = s.now.Add(d)
	for _, ev := range evs {
		s.evs = append(s.evs, timedEvent{line: -1, at: s.now, ev: ev})
	}
	return s
}

// snap marks a snapshot after advancing the clock by d.
func (s *script) snap(d time.Duration) *script {
	s.now = s.now.Add(d)
	s.evs = append(s.evs, timedEvent{line: -1, at: s.now})
	return s
}

// renderScenario applies the events to a new Turn and lays out a progress
// render after every snapshot mark, or (snapAll) after every event that
// changed the fingerprint, and the compact final form at the end. Every
// render is checked against Telegram's rules on the way.
func renderScenario(t *testing.T, evs []timedEvent, o render.ProgressOptions, snapAll bool) string {
	t.Helper()
	turn := render.NewTurn(base)
	var b strings.Builder
	var last time.Time
	snapshot := func(label string, at time.Time) {
		o.Now = at
		html, kb := render.RenderProgress(turn, o)
		checkMessage(t, html)
		checkKeyboard(t, kb)
		fmt.Fprintf(&b, "── %s @+%s · %s · %d visible ──\n%s\n%s\n", label, at.Sub(base), turn.Phase(), render.VisibleLen(html), html, formatKeyboard(kb))
	}
	for _, te := range evs {
		last = te.at
		if te.ev == nil {
			snapshot("snapshot", te.at)
			continue
		}
		before := turn.Fingerprint()
		turn.Apply(te.ev, te.at)
		if snapAll && turn.Fingerprint() != before {
			label := fmt.Sprintf("%T", te.ev)
			if te.line >= 0 {
				label = fmt.Sprintf("line %d %s", te.line, label)
			}
			snapshot(label, te.at)
		}
	}
	o.Now = last
	final := render.RenderProgressFinal(turn, o)
	checkMessage(t, final)
	fmt.Fprintf(&b, "── final form ──\n%s\n", final)
	return b.String()
}

// TestProgressTranscripts renders the progress message through real CLI
// captures, after every event that changes what it shows.
func TestProgressTranscripts(t *testing.T) {
	tests := []struct {
		name    string
		verbose bool
	}{
		{"c1-bash-allow", false},                             // a simple tool turn with an approval
		{"e1-529-then-success", false},                       // API retry 2/10 then success
		{"e2-529-always-max-retries-3", false},               // retries exhausted: failed turn
		{"f3-429-unified-headers-oauth-token", false},        // usage limit rejected
		{"g-compact", false},                                 // manual compaction between turns
		{"s3-uuid-command-lifecycle-queue-interrupt", false}, // queued message, cancelled turn
		{"zz-synthetic-spec-frames", true},                   // subagent, background task, notices, rate limit
		{"a2-thinking-partial-messages", true},               // thinking and streamed deltas
		{"i1-plan-mode-exitplanmode-askuserquestion", false}, // plan approval and a question
		{"d2-interrupt-pending-permission-and-running-tool", false},
		{"c2-bash-deny", false},                          // "denied by you" on the refused call
		{"c5-write-mode-dontAsk", false},                 // "blocked by dontAsk mode"
		{"c5-write-mode-acceptEdits", false},             // "allowed by acceptEdits mode"
		{"f4-oauth-success-with-warning-headers", false}, // a window warns under a top-level "allowed"
		{"zz-synthetic-wakeups", false},                  // ScheduleWakeup and CronCreate rows with countdowns; a woken turn
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderScenario(t, transcriptEvents(t, tt.name),
				render.ProgressOptions{MaxRows: 8, Verbose: tt.verbose, CancelData: "cancel:7f3a"}, true)
			checkRenderGolden(t, "progress", tt.name, got)
		})
	}
}

const hostile = `<script>alert("x")</script> & <b>bold</b> &amp;`

func toolEvents(n int, failEvery int) []runner.Event {
	names := []string{"Read", "Grep", "Bash", "Edit"}
	var evs []runner.Event
	for i := range n {
		id := runner.ToolUseID(fmt.Sprintf("toolu_%04d", i))
		name := names[i%len(names)]
		evs = append(evs, runner.ToolStarted{ID: id, Name: name, Summary: fmt.Sprintf("internal/pkg%d/file%d.go", i%7, i)})
		ok := failEvery == 0 || i%failEvery != failEvery-1
		evs = append(evs, runner.ToolFinished{ID: id, Name: name, OK: ok, Preview: "exit status 1: undefined: foo"})
	}
	return evs
}

func started() runner.TurnStarted {
	return runner.TurnStarted{SessionID: "605d1bf7-3cec-4407-b87c-fafb31b34500", Model: "claude-opus-5-5", PermissionMode: runner.ModeDefault}
}

func completed(ok bool) runner.TurnCompleted {
	return runner.TurnCompleted{OK: ok, Subtype: "success", TerminalReason: "completed", CostUSD: 0.0123,
		ContextPercent: 12.4, Duration: 65 * time.Second, Answer: "All done."}
}

// TestProgressScenarios covers what the captures do not: long turns,
// subagents, notes of every kind and hostile text.
func TestProgressScenarios(t *testing.T) {
	tests := []struct {
		name   string
		opts   render.ProgressOptions
		script *script
	}{
		{"simple-tool-turn", render.ProgressOptions{}, newScript().
			snap(0).
			at(2*time.Second, started(), runner.AssistantText{Text: "Let me look at the tests."}).
			at(time.Second, runner.ToolStarted{ID: "t1", Name: "Bash", Summary: "go test ./..."}).snap(0).
			at(9*time.Second, runner.ToolFinished{ID: "t1", OK: true, Preview: "ok"}, runner.AssistantText{Text: "All tests pass."}).snap(0).
			at(time.Second, completed(true)).snap(0)},
		{"two-hundred-tools", render.ProgressOptions{MaxRows: 8}, newScript().
			at(0, started()).
			at(time.Second, toolEvents(200, 50)...).
			at(time.Second, runner.ToolStarted{ID: "last", Name: "Bash", Summary: "go build ./cmd/untether"}).
			snap(3*time.Minute + 47*time.Second)},
		{"two-hundred-tools-verbose", render.ProgressOptions{MaxRows: 5, Verbose: true}, newScript().
			at(0, started()).
			at(time.Second, toolEvents(200, 3)...).
			snap(time.Second)},
		{"subagents", render.ProgressOptions{MaxRows: 10}, newScript().
			at(0, started()).
			at(time.Second, runner.ToolStarted{ID: "task1", Name: "Task", Summary: "explore the repo"},
				runner.TaskStarted{TaskID: "a1", ToolUseID: "task1", Description: "explore the repo", TaskType: "local_agent"},
				runner.ToolStarted{ID: "r1", Name: "Read", Summary: "/repo/main.go", ParentID: "task1"},
				runner.ToolFinished{ID: "r1", OK: true, ParentID: "task1"},
				runner.ToolStarted{ID: "task2", Name: "Task", Summary: "check the tests", ParentID: "task1"},
				runner.ToolStarted{ID: "g1", Name: "Grep", Summary: "func Test in /repo", ParentID: "task2"},
				runner.ToolFinished{ID: "g1", OK: false, Preview: "no matches", ParentID: "task2"},
				runner.TaskProgress{TaskID: "a1", LastTool: "Grep", ToolUses: 3, Tokens: 52470}).
			snap(5*time.Second).
			at(time.Second, runner.ToolFinished{ID: "task2", OK: true, ParentID: "task1"},
				runner.TaskFinished{TaskID: "a1", ToolUseID: "task1", Status: "completed", Summary: "found main.go"},
				runner.ToolFinished{ID: "task1", OK: true}).
			snap(0)},
		{"background-tasks-and-queue", render.ProgressOptions{}, newScript().
			at(0, started()).
			at(time.Second, runner.ToolStarted{ID: "b1", Name: "Bash", Summary: "npm run dev"},
				runner.TaskStarted{TaskID: "bash1", Description: "npm run dev", TaskType: "local_bash", Backgrounded: true},
				runner.ToolFinished{ID: "b1", OK: true},
				runner.BackgroundTasks{Tasks: []runner.TaskInfo{{TaskID: "bash1", TaskType: "local_bash", Description: "npm run dev"},
					{TaskID: "mon1", TaskType: "monitor", Description: "watch the logs"}}},
				runner.MessageLifecycle{UUID: "u2", State: runner.MessageQueued}).
			snap(time.Second).
			at(time.Second, runner.MessageLifecycle{UUID: "u3", State: runner.MessageQueued}).snap(0).
			at(time.Second, runner.BackgroundTasks{Tasks: []runner.TaskInfo{{TaskID: "mon1", TaskType: "monitor", Description: "watch the logs"}}},
				runner.MessageLifecycle{UUID: "u2", State: runner.MessageStarted}).snap(0)},
		{"rate-limit", render.ProgressOptions{}, newScript().
			at(0, started()).
			at(time.Second, runner.RateLimit{Status: "allowed_warning", WindowType: "five_hour", Utilization: 0.91,
				ResetsAt: base.Add(2*time.Hour + 50*time.Minute)}).snap(0).
			at(time.Second, runner.RateLimit{Status: "rejected", WindowType: "seven_day", Utilization: 1,
				ResetsAt: base.Add(50 * time.Hour)}).snap(0).
			at(time.Second, runner.RateLimit{Status: "allowed", WindowType: "seven_day"}).snap(0)},
		{"compaction", render.ProgressOptions{}, newScript().
			at(0, started(), runner.CompactionStarted{}).snap(0).
			at(20*time.Second, runner.CompactionFinished{Trigger: "auto", PreTokens: 167_034, PostTokens: 12_310}).snap(0).
			at(time.Second, runner.CompactionStarted{}, runner.CompactionFailed{Error: "prompt too long"}).snap(0)},
		{"notices", render.ProgressOptions{}, newScript().
			at(0, started()).
			at(time.Second, runner.Notice{Kind: runner.NoticeSafeguard, Level: "notice", Text: "declined", OriginalModel: "claude-opus-5-5", Category: "cyber"},
				runner.Notice{Kind: runner.NoticeRefusalFallback, Level: "warning", Text: "Retrying with Opus 4.8", OriginalModel: "claude-opus-5-5", FallbackModel: "claude-opus-4-8"},
				runner.Notice{Kind: runner.NoticeRefusalNoFallback, Level: "warning", OriginalModel: "claude-opus-5-5"},
				runner.Notice{Kind: runner.NoticeModelFallback, Level: "warning", Text: "Opus is overloaded; using Sonnet", OriginalModel: "claude-opus-5-5", FallbackModel: "claude-sonnet-5-5"},
				runner.Notice{Kind: runner.NoticeInfo, Text: "Opus 5.5's safeguards stopped the response above · continuing once with that noted"},
				runner.PermissionDenied{Tool: "Bash", ToolUseID: "t9", Reason: "dontAsk mode"},
				runner.PermissionDenied{Tool: "Write", ToolUseID: "t10", Message: "Permission to write /etc/passwd was denied"},
				runner.PermissionModeChanged{Mode: runner.ModeAcceptEdits},
				runner.SessionRestarted{Previous: "old", Current: "new", Reason: "No conversation found"}).snap(0)},
		{"cancelled", render.ProgressOptions{CancelData: "cancel:1"}, newScript().
			at(0, started()).
			at(time.Second, runner.ToolStarted{ID: "t1", Name: "Bash", Summary: "sleep 600"}, runner.TextDelta{Text: "Waiting for the"}).snap(0).
			at(5*time.Second, runner.TurnCompleted{OK: false, Subtype: "error_during_execution", TerminalReason: "aborted_tools", CostUSD: 0.0046, ContextPercent: 0.1}).snap(0)},
		{"crashed", render.ProgressOptions{CancelData: "cancel:1"}, newScript().
			at(0, started()).
			at(time.Second, runner.ToolStarted{ID: "t1", Name: "Bash", Summary: "make"}).
			at(time.Second, runner.ProcessExited{ExitCode: -1, Signal: "killed", StderrTail: "out of memory"}).snap(0)},
		{"long-running-tool", render.ProgressOptions{CancelData: "cancel:1"}, newScript().
			at(0, started()).
			at(time.Second, runner.ToolStarted{ID: "t1", Name: "Bash", Summary: "npm run build"}).snap(59 * time.Second).snap(3*time.Minute + 47*time.Second)},
		{"hostile", render.ProgressOptions{Verbose: true, CancelData: "cancel:1"}, newScript().
			at(0, runner.TurnStarted{Model: hostile, PermissionMode: hostile}).
			at(time.Second, runner.ToolStarted{ID: "t1", Name: hostile, Summary: hostile + "\n\x1b[31mred\x1b[0m \xff"},
				runner.ToolFinished{ID: "t1", OK: false, Preview: hostile},
				runner.Thinking{Text: hostile},
				runner.TextDelta{Text: hostile + "\n" + hostile},
				runner.Notice{Kind: runner.NoticeInfo, Text: hostile},
				runner.Notice{Kind: runner.NoticeModelFallback, OriginalModel: hostile, FallbackModel: hostile + "2"},
				runner.APIRetry{Attempt: 1, MaxRetries: 2, Status: 500, Error: hostile, Delay: 1500 * time.Millisecond},
				runner.CompactionFailed{Error: hostile},
				runner.PermissionDenied{Tool: hostile, Reason: hostile},
				runner.TaskStarted{TaskID: "x", Description: hostile},
				runner.ApprovalRequested{RequestID: "r", DisplayName: hostile}).snap(0).
			at(time.Second, runner.TurnCompleted{OK: true, CostUSD: 1.5, ContextPercent: 97.6}).snap(0)},
		{"long-stream", render.ProgressOptions{MaxRows: 64, Verbose: true}, newScript().
			at(0, started()).
			at(time.Second, toolEvents(200, 7)...).
			at(time.Second, runner.Thinking{Text: strings.Repeat("I should think about this carefully. ", 50)}).
			at(time.Second, streamDeltas(strings.Repeat("The answer streams in, word by word, until it is long. ", 190), 100)...).
			snap(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRenderGolden(t, "progress", tt.name, renderScenario(t, tt.script.evs, tt.opts, false))
		})
	}
}

// streamDeltas cuts text into n-byte deltas (rune boundaries aside, which
// the runner's deltas do not guarantee either).
func streamDeltas(text string, n int) []runner.Event {
	var evs []runner.Event
	for len(text) > 0 {
		k := min(n, len(text))
		evs = append(evs, runner.TextDelta{Text: text[:k]})
		text = text[k:]
	}
	return evs
}

// TestProgressFitsLimit pushes every section to its bounds: the message
// stays valid and within SafeChunkLimit, keeps the newest row and the end
// of the streamed text.
func TestProgressFitsLimit(t *testing.T) {
	long := strings.Repeat("x", 500)
	texts := map[string]string{
		"ascii":  strings.Repeat("streamed answer text ", 500), // 10.5 KB
		"emoji":  strings.Repeat("🙂👍🏽", 1200),                  // astral runes count twice
		"html":   strings.Repeat(hostile, 200),
		"cjk":    strings.Repeat("漢字かな交じり文", 700),
		"broken": strings.Repeat("ok \xff\xfe ", 1500),
	}
	for textName, text := range texts {
		for _, maxRows := range []int{0, 1, 8, 64, 1000} {
			for _, verbose := range []bool{false, true} {
				name := fmt.Sprintf("%s/rows=%d/verbose=%v", textName, maxRows, verbose)
				t.Run(name, func(t *testing.T) {
					turn := render.NewTurn(base)
					turn.Apply(runner.TurnStarted{Model: long, PermissionMode: runner.PermissionMode(long)}, base)
					for i := range 200 {
						id := runner.ToolUseID(strconv.Itoa(i))
						turn.Apply(runner.ToolStarted{ID: id, Name: long, Summary: long + text[:100], ParentID: runner.ToolUseID(strconv.Itoa(i - 1))}, base)
						turn.Apply(runner.ToolFinished{ID: id, OK: i%2 == 0, Preview: long}, base)
					}
					turn.Apply(runner.ToolStarted{ID: "newest", Name: "Newest", Summary: "the newest row"}, base)
					for _, ev := range []runner.Event{
						runner.Thinking{Text: text},
						runner.Notice{Kind: runner.NoticeInfo, Text: long}, runner.Notice{Kind: runner.NoticeSafeguard, Text: long},
						runner.Notice{Kind: runner.NoticeModelFallback, Text: long}, runner.Notice{Kind: runner.NoticeRefusalFallback, Text: long},
						runner.PermissionDenied{Tool: long, Reason: long},
						runner.RateLimit{Status: "rejected", WindowType: long, ResetsAt: base.Add(time.Hour)},
						runner.CompactionFailed{Error: long},
						runner.SessionRestarted{},
					} {
						turn.Apply(ev, base)
					}
					for i := range 20 {
						turn.Apply(runner.TaskStarted{TaskID: strconv.Itoa(i), Description: long}, base)
						turn.Apply(runner.ApprovalRequested{RequestID: runner.RequestID(strconv.Itoa(i)), DisplayName: long}, base)
						turn.Apply(runner.MessageLifecycle{UUID: runner.MessageUUID(strconv.Itoa(i)), State: runner.MessageQueued}, base)
					}
					turn.Apply(runner.APIRetry{Attempt: 3, MaxRetries: 10, Error: long}, base)
					for _, ev := range streamDeltas(text, 97) {
						turn.Apply(ev, base)
					}
					turn.Apply(runner.ToolStarted{ID: "newest", Name: "Newest", Summary: "the newest row"}, base)
					turn.Apply(runner.TextDelta{Text: " THE END"}, base)

					html, kb := render.RenderProgress(turn, render.ProgressOptions{MaxRows: maxRows, Verbose: verbose, Now: base.Add(time.Hour), CancelData: "c"})
					checkMessage(t, html)
					checkKeyboard(t, kb)
					plain := render.HTMLToPlain(html)
					assert.Contains(t, plain, "Newest the newest row", "the newest row is shown")
					assert.Contains(t, plain, "THE END", "the end of the streamed text is shown")
					assert.Contains(t, plain, "earlier steps")
				})
			}
		}
	}
}

func TestProgressRowsAndEarlierSteps(t *testing.T) {
	tests := []struct {
		tools, maxRows int
		wantRows       int
		wantEarlier    string
	}{
		{0, 5, 0, ""},
		{3, 5, 3, ""},
		{5, 5, 5, ""},
		{20, 5, 5, "… and 15 earlier steps"},
		{6, 5, 5, "… and 1 earlier step"},
		{20, 0, 8, "… and 12 earlier steps"},
		{100, 64, 64, "… and 36 earlier steps"},
		{100, 500, 64, "… and 36 earlier steps"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d tools, %d rows", tt.tools, tt.maxRows), func(t *testing.T) {
			turn := render.NewTurn(base)
			for _, ev := range toolEvents(tt.tools, 0) {
				turn.Apply(ev, base)
			}
			html, _ := render.RenderProgress(turn, render.ProgressOptions{MaxRows: tt.maxRows, Now: base})
			checkMessage(t, html)
			assert.Equal(t, tt.wantRows, strings.Count(html, "✓ <b>"), "rows shown")
			if tt.wantEarlier == "" {
				assert.NotContains(t, html, "earlier step")
			} else {
				assert.Contains(t, html, "<i>"+tt.wantEarlier+"</i>")
			}
		})
	}
}

func TestProgressTextTail(t *testing.T) {
	tests := []struct {
		name string
		evs  []runner.Event
		want string // the blockquote's text; "" for none
	}{
		{"no text", nil, ""},
		{"deltas accumulate", []runner.Event{runner.TextDelta{Text: "Hel"}, runner.TextDelta{Text: "lo"}}, "Hello"},
		{"a complete block replaces its deltas", []runner.Event{runner.TextDelta{Text: "Hel"}, runner.AssistantText{Text: "Hello there."}}, "Hello there."},
		{"the next block starts over", []runner.Event{runner.AssistantText{Text: "First."}, runner.TextDelta{Text: "Sec"}}, "Sec"},
		{"a subagent's text is not the answer", []runner.Event{runner.AssistantText{Text: "Mine."}, runner.AssistantText{Text: "Sub.", ParentToolUseID: "t1"}}, "Mine."},
		{"whitespace only", []runner.Event{runner.TextDelta{Text: "\n\n  "}}, ""},
		{"escaped", []runner.Event{runner.TextDelta{Text: "a < b && c > d"}}, "a &lt; b &amp;&amp; c &gt; d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := render.NewTurn(base)
			for _, ev := range tt.evs {
				turn.Apply(ev, base)
			}
			html, _ := render.RenderProgress(turn, render.ProgressOptions{Now: base})
			checkMessage(t, html)
			_, quote, found := strings.Cut(html, "<blockquote>")
			if tt.want == "" {
				assert.False(t, found, html)
				return
			}
			require.True(t, found, html)
			quote, _, _ = strings.Cut(quote, "</blockquote>")
			assert.Equal(t, tt.want, quote)
		})
	}
}

func TestProgressKeyboard(t *testing.T) {
	tests := []struct {
		name   string
		evs    []runner.Event
		cancel string
		want   render.Keyboard
	}{
		{"running", []runner.Event{started()}, "cancel:1", render.Keyboard{Rows: [][]render.Button{{{Text: "⏹ Cancel", CallbackData: "cancel:1"}}}}},
		{"waiting for approval", []runner.Event{runner.ApprovalRequested{RequestID: "r"}}, "cancel:1", render.Keyboard{Rows: [][]render.Button{{{Text: "⏹ Cancel", CallbackData: "cancel:1"}}}}},
		{"no callback data", []runner.Event{started()}, "", render.Keyboard{}},
		{"done", []runner.Event{started(), completed(true)}, "cancel:1", render.Keyboard{}},
		{"failed", []runner.Event{started(), completed(false)}, "cancel:1", render.Keyboard{}},
		{"crashed", []runner.Event{started(), runner.ProcessExited{ExitCode: 1}}, "cancel:1", render.Keyboard{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := render.NewTurn(base)
			for _, ev := range tt.evs {
				turn.Apply(ev, base)
			}
			_, kb := render.RenderProgress(turn, render.ProgressOptions{CancelData: tt.cancel})
			assert.Equal(t, tt.want, kb)
			// The empty keyboard must still marshal to one, which is
			// what removes the button in an edit.
			b, err := json.Marshal(kb)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"inline_keyboard":[`)
		})
	}
}

func TestProgressFinal(t *testing.T) {
	tests := []struct {
		name string
		evs  []runner.Event
		end  time.Duration
		want string
	}{
		{"done", []runner.Event{started(), runner.ToolStarted{ID: "a"}, runner.ToolStarted{ID: "b"}, completed(true)}, 65 * time.Second,
			"✅ <b>Done</b> · 2 steps · 1m05s · $0.0123"},
		{"one step, free", []runner.Event{runner.ToolStarted{ID: "a"}, runner.TurnCompleted{OK: true}}, 3 * time.Second,
			"✅ <b>Done</b> · 1 step · 3s"},
		{"cancelled", []runner.Event{runner.TurnCompleted{TerminalReason: "aborted_streaming"}}, 2 * time.Hour,
			"⏹ <b>Cancelled</b> · 2h00m"},
		{"failed", []runner.Event{runner.TurnCompleted{APIErrorStatus: 529}}, 4 * time.Second, "❌ <b>Failed</b> · 4s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := render.NewTurn(base)
			for _, ev := range tt.evs {
				turn.Apply(ev, base.Add(tt.end))
			}
			// Rendering later must not stretch a finished turn's time.
			got := render.RenderProgressFinal(turn, render.ProgressOptions{Now: base.Add(tt.end + time.Hour)})
			assert.Equal(t, tt.want, got)
			checkMessage(t, got)
		})
	}
}

func TestFormatElapsed(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{12 * time.Second, "12s"},
		{59 * time.Second, "59s"},
		{65 * time.Second, "1m05s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour + 2*time.Minute + 30*time.Second, "1h02m"},
		{47*time.Hour + 59*time.Minute, "47h59m"},
		{50 * time.Hour, "2d02h"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render.FormatElapsed(tt.d), "%v", tt.d)
	}
}

// FuzzProgress renders arbitrary text in every field a user or model can
// influence; the message must stay valid and within the limit.
func FuzzProgress(f *testing.F) {
	f.Add("Bash", "ls -la", "hello", 3)
	f.Add(hostile, hostile, hostile, 200)
	f.Add("\xff", "\x00\x1b[0m", "🙂👍🏽\u200d", 70)
	f.Fuzz(func(t *testing.T, name, summary, text string, n int) {
		n = min(max(n, 0), 300)
		turn := render.NewTurn(base)
		turn.Apply(runner.TurnStarted{Model: name, PermissionMode: runner.PermissionMode(summary)}, base)
		for i := range n {
			turn.Apply(runner.ToolStarted{ID: runner.ToolUseID(strconv.Itoa(i)), Name: name, Summary: summary, ParentID: runner.ToolUseID(strconv.Itoa(i / 2))}, base)
			turn.Apply(runner.ToolFinished{ID: runner.ToolUseID(strconv.Itoa(i)), OK: i%3 == 0, Preview: text}, base)
		}
		turn.Apply(runner.Thinking{Text: text}, base)
		turn.Apply(runner.Notice{Kind: runner.NoticeKind(name), Text: text}, base)
		turn.Apply(runner.TaskStarted{TaskID: name, Description: text}, base)
		turn.Apply(runner.TextDelta{Text: strings.Repeat(text, 50)}, base)
		html, kb := render.RenderProgress(turn, render.ProgressOptions{Verbose: true, CancelData: "c", MaxRows: n})
		if strings.TrimSpace(render.HTMLToPlain(html)) == "" {
			t.Fatal("blank progress message")
		}
		if err := validateTelegramHTML(html); err != nil {
			t.Fatalf("%v\n%s", err, html)
		}
		if l := render.VisibleLen(html); l > render.SafeChunkLimit {
			t.Fatalf("visible length %d", l)
		}
		if err := kb.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

package render_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// base is the wall-clock origin of every scenario; tests never read the
// real clock.
var base = time.Date(2026, 9, 28, 4, 0, 0, 0, time.UTC)

const renderTestdata = "../../testdata/render"

// checkRenderGolden compares got with testdata/render/<area>/<name>.golden,
// rewriting it under -update (the flag declared in markdown_test.go).
func checkRenderGolden(t *testing.T, area, name, got string) {
	t.Helper()
	path := filepath.Join(renderTestdata, area, name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./internal/render -update")
	assert.Equal(t, string(want), got)
}

// checkMessage asserts what Telegram requires of every message we send:
// valid HTML in the accepted subset, some visible text, and a visible
// length within SafeChunkLimit.
func checkMessage(t *testing.T, html string) {
	t.Helper()
	assert.NoError(t, validateTelegramHTML(html), "%s", html)
	assert.LessOrEqual(t, render.VisibleLen(html), render.SafeChunkLimit, "visible length")
	assert.NotEmpty(t, strings.TrimSpace(render.HTMLToPlain(html)), "message is blank")
}

// checkKeyboard asserts Telegram's keyboard rules, callback_data of at most
// 64 bytes included.
func checkKeyboard(t *testing.T, kb render.Keyboard) {
	t.Helper()
	assert.NoError(t, kb.Validate())
	for _, row := range kb.Rows {
		for _, b := range row {
			assert.LessOrEqual(t, len(b.CallbackData), render.MaxCallbackDataBytes, "%q", b.Text)
		}
	}
}

// formatKeyboard lays a keyboard out for golden files, one row a line.
func formatKeyboard(kb render.Keyboard) string {
	if len(kb.Rows) == 0 {
		return "[no keyboard]\n"
	}
	var b strings.Builder
	for _, row := range kb.Rows {
		b.WriteString("[keyboard]")
		for _, bt := range row {
			b.WriteString(" [" + bt.Text + " → " + bt.CallbackData + "]")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// timedEvent is a runner event and when it arrived.
type timedEvent struct {
	line int // source line of the capture, -1 for hand-built events
	at   time.Time
	ev   runner.Event
}

// transcriptEvents replays a CLI capture from testdata/transcripts through
// the runner's decoder and translator, the way a session does, keeping the
// capture's own timing.
func transcriptEvents(t *testing.T, name string) []timedEvent {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "transcripts", name+".jsonl"))
	require.NoError(t, err)
	defer f.Close()
	tr := runner.NewTranslator(0)
	var out []timedEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for i := 0; sc.Scan(); i++ {
		var rec struct {
			T    float64         `json:"t"`
			Dir  string          `json:"dir"`
			Line json.RawMessage `json:"line"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		if rec.Dir != "out" || len(rec.Line) == 0 || rec.Line[0] != '{' {
			continue
		}
		// A partly decoded frame still yields its events, as in a session;
		// a line that is no frame at all becomes a Warning, which render
		// ignores.
		fr, _ := runner.DecodeFrame(rec.Line)
		if fr == nil {
			continue
		}
		at := base.Add(time.Duration(rec.T * float64(time.Second)))
		for _, ev := range tr.Translate(fr, nil) {
			out = append(out, timedEvent{line: i, at: at, ev: ev})
		}
	}
	require.NoError(t, sc.Err())
	return out // some captures (bad input, early exits) have no events
}

// allTranscripts lists the capture names.
func allTranscripts(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".jsonl")
	}
	return names
}

func TestTurnPhase(t *testing.T) {
	started := runner.TurnStarted{SessionID: "s1", Model: "claude-opus-5-5", PermissionMode: runner.ModeDefault}
	tests := []struct {
		name string
		evs  []runner.Event
		want render.Phase
	}{
		{"nothing yet", nil, render.PhaseStarting},
		{"init only", []runner.Event{started}, render.PhaseStarting},
		{"text", []runner.Event{started, runner.TextDelta{Text: "hi"}}, render.PhaseRunning},
		{"tool", []runner.Event{started, runner.ToolStarted{ID: "t1", Name: "Read"}}, render.PhaseRunning},
		{"retry", []runner.Event{started, runner.APIRetry{Attempt: 1, MaxRetries: 10, Status: 529}}, render.PhaseRetrying},
		{"retry cleared by text", []runner.Event{started, runner.APIRetry{Attempt: 1}, runner.AssistantText{Text: "ok"}}, render.PhaseRunning},
		{"retry cleared by thinking", []runner.Event{started, runner.APIRetry{Attempt: 1}, runner.Thinking{Text: "hm"}}, render.PhaseRunning},
		{"approval", []runner.Event{started, runner.ApprovalRequested{RequestID: "r1", Tool: "Bash"}}, render.PhaseAwaitingApproval},
		{"approval wins over retry", []runner.Event{started, runner.APIRetry{Attempt: 1}, runner.ApprovalRequested{RequestID: "r1"}}, render.PhaseAwaitingApproval},
		{"approval withdrawn", []runner.Event{started, runner.ApprovalRequested{RequestID: "r1"}, runner.ApprovalWithdrawn{RequestID: "r1"}}, render.PhaseRunning},
		{"approval decided: its tool finished", []runner.Event{started, runner.ToolStarted{ID: "t1", Name: "Bash"},
			runner.ApprovalRequested{RequestID: "r1", ToolUseID: "t1"}, runner.ToolFinished{ID: "t1", OK: true}}, render.PhaseRunning},
		{"compacting", []runner.Event{started, runner.CompactionStarted{}}, render.PhaseCompacting},
		{"compacted", []runner.Event{started, runner.CompactionStarted{}, runner.CompactionFinished{Trigger: "auto"}}, render.PhaseStarting},
		{"done", []runner.Event{started, runner.TurnCompleted{OK: true}}, render.PhaseDone},
		{"failed", []runner.Event{started, runner.TurnCompleted{OK: false, APIErrorStatus: 529}}, render.PhaseFailed},
		{"cancelled streaming", []runner.Event{started, runner.TurnCompleted{TerminalReason: "aborted_streaming"}}, render.PhaseCancelled},
		{"cancelled tools", []runner.Event{started, runner.TurnCompleted{TerminalReason: "aborted_tools"}}, render.PhaseCancelled},
		{"crashed", []runner.Event{started, runner.ProcessExited{ExitCode: 1}}, render.PhaseFailed},
		{"stopped on request", []runner.Event{started, runner.ProcessExited{ExitCode: -1, Signal: "killed", Requested: true}}, render.PhaseCancelled},
		{"exit after result is not news", []runner.Event{started, runner.TurnCompleted{OK: true}, runner.ProcessExited{ExitCode: 1}}, render.PhaseDone},
		{"next turn starts over", []runner.Event{started, runner.TurnCompleted{OK: true}, started}, render.PhaseStarting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := render.NewTurn(base)
			for i, ev := range tt.evs {
				turn.Apply(ev, base.Add(time.Duration(i)*time.Second))
			}
			assert.Equal(t, tt.want, turn.Phase(), "phase %s", turn.Phase())
			assert.Equal(t, tt.want.Finished(), turn.Phase().Finished())
		})
	}
}

func TestTurnFingerprint(t *testing.T) {
	turn := render.NewTurn(base)
	turn.Apply(runner.TurnStarted{Model: "m"}, base)
	tests := []struct {
		name    string
		ev      runner.Event
		changes bool
	}{
		{"tool started", runner.ToolStarted{ID: "t1", Name: "Read"}, true},
		{"tool finished", runner.ToolFinished{ID: "t1", OK: true}, true},
		{"duplicate tool result", runner.ToolFinished{ID: "t1", OK: true}, true},
		{"unknown frame", runner.Unknown{Kind: "future"}, false},
		{"non-JSON line", runner.Warning{Line: []byte("x")}, false},
		{"process started", runner.ProcessStarted{PID: 1}, false},
		{"steady allowed rate limit", runner.RateLimit{Status: "allowed", WindowType: "five_hour"}, false},
		{"rate limit warning", runner.RateLimit{Status: "allowed_warning", WindowType: "five_hour", Utilization: 0.9}, true},
		{"allowed lifts the warning", runner.RateLimit{Status: "allowed", WindowType: "five_hour"}, true},
		{"notice", runner.Notice{Kind: runner.NoticeInfo, Text: "x"}, true},
		{"same notice repeated", runner.Notice{Kind: runner.NoticeInfo, Text: "x"}, false},
		{"same mode", runner.PermissionModeChanged{Mode: ""}, false},
		{"new mode", runner.PermissionModeChanged{Mode: runner.ModePlan}, true},
		{"withdrawing an unknown request", runner.ApprovalWithdrawn{RequestID: "nope"}, false},
		{"message queued", runner.MessageLifecycle{UUID: "u1", State: runner.MessageQueued}, true},
		{"queued again", runner.MessageLifecycle{UUID: "u1", State: runner.MessageQueued}, false},
		{"message started", runner.MessageLifecycle{UUID: "u1", State: runner.MessageStarted}, true},
	}
	for _, tt := range tests {
		before := turn.Fingerprint()
		turn.Apply(tt.ev, base.Add(time.Second))
		assert.Equal(t, tt.changes, turn.Fingerprint() != before, tt.name)
	}
}

// TestFingerprintMeansSameRender checks the contract the bridge relies on:
// after events that leave the fingerprint alone, the render is unchanged.
func TestFingerprintMeansSameRender(t *testing.T) {
	turn := render.NewTurn(base)
	for _, te := range transcriptEvents(t, "zz-synthetic-spec-frames") {
		before := turn.Fingerprint()
		o := render.ProgressOptions{Now: te.at, CancelData: "c", Verbose: true}
		html, _ := render.RenderProgress(turn, o)
		turn.Apply(te.ev, te.at)
		if turn.Fingerprint() == before {
			after, _ := render.RenderProgress(turn, o)
			assert.Equal(t, html, after, "%T changed the render without changing the fingerprint", te.ev)
		}
	}
}

func TestTurnResolve(t *testing.T) {
	turn := render.NewTurn(base)
	turn.Apply(runner.ApprovalRequested{RequestID: "r1", Tool: "Bash"}, base)
	turn.Apply(runner.ApprovalRequested{RequestID: "r2", Tool: "Edit"}, base)
	assert.Equal(t, 2, turn.PendingApprovals())
	before := turn.Fingerprint()
	assert.True(t, turn.Resolve("r1"))
	assert.False(t, turn.Resolve("r1"), "resolving twice")
	assert.NotEqual(t, before, turn.Fingerprint())
	assert.Equal(t, 1, turn.PendingApprovals())
	assert.Equal(t, render.PhaseAwaitingApproval, turn.Phase())
	turn.Apply(runner.TurnCompleted{OK: true}, base)
	assert.Zero(t, turn.PendingApprovals(), "a finished turn waits for nobody")
}

func TestTurnSubagentDepth(t *testing.T) {
	turn := render.NewTurn(base)
	for _, ev := range []runner.Event{
		runner.ToolStarted{ID: "task", Name: "Task"},
		runner.ToolStarted{ID: "read", Name: "Read", ParentID: "task"},
		runner.ToolStarted{ID: "task2", Name: "Task", ParentID: "task"},
		runner.ToolStarted{ID: "grep", Name: "Grep", ParentID: "task2"},
		runner.ToolStarted{ID: "orphan", Name: "Grep", ParentID: "gone"},
	} {
		turn.Apply(ev, base)
	}
	var depths []int
	for _, r := range turn.Rows() {
		depths = append(depths, r.Depth)
	}
	assert.Equal(t, []int{0, 1, 1, 2, 1}, depths)
}

// TestTurnBoundedMemory feeds ten thousand tool calls and a long stream of
// text: the turn keeps 64 rows and counts the rest, and applying events
// does not allocate once its buffers have grown.
func TestTurnBoundedMemory(t *testing.T) {
	turn := render.NewTurn(base)
	turn.Apply(runner.TurnStarted{Model: "claude-opus-5-5"}, base)
	for i := range 10_000 {
		id := runner.ToolUseID("toolu_" + strconv.Itoa(i))
		turn.Apply(runner.ToolStarted{ID: id, Name: "Bash", Summary: "make test"}, base)
		turn.Apply(runner.ToolFinished{ID: id, OK: i%10 != 0}, base)
	}
	assert.Equal(t, 10_000, turn.Steps)
	assert.Equal(t, 9_000, turn.Succeeded)
	assert.Equal(t, 1_000, turn.Failed)
	assert.Zero(t, turn.Running())
	rows := turn.Rows()
	require.Len(t, rows, 64)
	assert.Equal(t, runner.ToolUseID("toolu_9999"), rows[63].ID, "the newest row is kept")
	assert.Equal(t, runner.ToolUseID("toolu_9936"), rows[0].ID, "the oldest kept row")

	var start, finish, delta runner.Event = runner.ToolStarted{ID: "x", Name: "Read", Summary: "a.go"},
		runner.ToolFinished{ID: "x", OK: true}, runner.TextDelta{Text: "streamed text "}
	for range 10_000 {
		turn.Apply(delta, base)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		turn.Apply(start, base)
		turn.Apply(finish, base)
		turn.Apply(delta, base)
	})
	assert.Zero(t, allocs, "allocations per tool call and text delta")

	html, _ := render.RenderProgress(turn, render.ProgressOptions{Now: base})
	checkMessage(t, html)
	assert.True(t, strings.HasSuffix(strings.TrimSpace(render.HTMLToPlain(html[:strings.LastIndex(html, "</blockquote>")])), "streamed text"),
		"the tail shows the latest text")
}

// TestReplayAllTranscripts renders every state of every capture: each
// progress message, approval and final message must be valid for Telegram.
func TestReplayAllTranscripts(t *testing.T) {
	for _, name := range allTranscripts(t) {
		t.Run(name, func(t *testing.T) {
			turn := render.NewTurn(base)
			for _, te := range transcriptEvents(t, name) {
				turn.Apply(te.ev, te.at)
				for _, verbose := range []bool{false, true} {
					html, kb := render.RenderProgress(turn, render.ProgressOptions{Now: te.at, Verbose: verbose, CancelData: "cancel:1"})
					checkMessage(t, html)
					checkKeyboard(t, kb)
				}
				checkMessage(t, render.RenderProgressFinal(turn, render.ProgressOptions{Now: te.at}))
				switch e := te.ev.(type) {
				case runner.ApprovalRequested:
					html, kb := render.RenderApproval(e, testButtons(e))
					checkMessage(t, html)
					checkKeyboard(t, kb)
					checkMessage(t, render.RenderApprovalDecided(e, render.DecisionApproved, "@alice", te.at))
				case runner.TurnCompleted:
					for _, c := range render.RenderFinal(e, render.FinalMeta{Model: turn.Model}) {
						checkMessage(t, c)
					}
				}
			}
		})
	}
}

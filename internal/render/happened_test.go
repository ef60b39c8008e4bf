package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// finalsLikeTheBridge replays a capture the way the bridge does: a Turn is
// created for each turn before its first frame (the bridge creates it when
// the message is sent, so frames the CLI prints before system/init, like a
// /compact's, belong to it), every event is applied, and each result is
// rendered with the Turn's Happened.
func finalsLikeTheBridge(t *testing.T, name string) string {
	t.Helper()
	var b strings.Builder
	var turn *render.Turn
	for _, te := range transcriptEvents(t, name) {
		if _, exited := te.ev.(runner.ProcessExited); turn == nil && !exited {
			turn = render.NewTurn(te.at)
		}
		if turn == nil {
			continue
		}
		turn.Apply(te.ev, te.at)
		tc, ok := te.ev.(runner.TurnCompleted)
		if !ok {
			continue
		}
		chunks := render.RenderFinal(tc, render.FinalMeta{Duration: tc.Duration, CostUSD: tc.CostUSD,
			ContextPercent: tc.ContextPercent, Model: turn.Model, Happened: turn.Happened()})
		fmt.Fprintf(&b, "══ line %d ══\n%s", te.line, formatFinal(t, chunks))
		turn = nil
	}
	require.NotEmpty(t, b.String(), "no result in %s", name)
	return b.String()
}

// TestFinalHappenedTranscripts: a quick turn's answer carries what
// happened in it, from real captures (and two marked synthetic ones for
// frames no capture has).
func TestFinalHappenedTranscripts(t *testing.T) {
	tests := []struct {
		name string
		want []string // must appear in the rendered answers
	}{
		{"e1-529-then-success", []string{"🔁 2 API retries (last error: 529 overloaded)"}},
		{"f4-oauth-success-with-warning-headers", []string{"⚠️ Approaching the 5-hour limit: 91% used"}},
		{"j-refusal", []string{"🛡 Safeguards stopped a response; the answer is from claude-opus-5-5"}},
		{"j3-refusal-always", []string{"🛡 Safeguards stopped 2 responses", "claude-opus-5-5 refused, and there is no fallback model"}},
		{"g-compact", []string{"🗜 <b>Conversation compacted</b>: 1.0k → 2.6k tokens", "ctx 0.3%"}},
		{"c5-write-mode-dontAsk", []string{"🚫 Write /home/dev/project/w.txt: blocked by dontAsk mode"}},
		{"c2-bash-deny", []string{"🚫 Bash echo hi &gt; out.txt: denied by you"}},
		{"k5-close-stdin-while-bash-runs", nil}, // its task ends before the answer: nothing to add
		{"i2-plan-mode-exitplanmode-denied", []string{"🚫 The plan: denied by you"}},
		{"zz-synthetic-background-task", []string{"🧵 Still running in the background: Run the test suite"}},
		{"zz-synthetic-wakeups", []string{"⏰ wakes up in 10m: check the deploy", "⏰ At 09:00 (once): remind the user about the release notes · next in 5h",
			"⏰ Claude woke up as it had scheduled (set for 04:10 UTC)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := finalsLikeTheBridge(t, tt.name)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
			checkRenderGolden(t, "final", "happened-"+tt.name, got)
		})
	}
}

// TestFinalHappenedScenarios covers what no capture shows: fallbacks,
// an expired approval, auto compaction and many refusals at once.
func TestFinalHappenedScenarios(t *testing.T) {
	denials := make([]runner.PermissionDenial, 5)
	for i := range denials {
		denials[i] = runner.PermissionDenial{ToolName: "Bash", ToolUseID: fmt.Sprintf("toolu_%d", i),
			ToolInput: []byte(fmt.Sprintf(`{"command":"rm -rf /tmp/x%d"}`, i))}
	}
	tests := []struct {
		name   string
		expire bool
		evs    []runner.Event
	}{
		{"fallbacks", false, []runner.Event{started(),
			runner.Notice{Kind: runner.NoticeModelFallback, Level: "warning", OriginalModel: "claude-opus-5-5", FallbackModel: "claude-sonnet-5-5", Text: "Opus is overloaded"},
			runner.Notice{Kind: runner.NoticeRefusalFallback, Level: "warning", OriginalModel: "claude-opus-5-5", FallbackModel: "claude-opus-4-8", Category: "cyber"},
			runner.Notice{Kind: runner.NoticeInfo, Level: "warning", Text: "A hook blocked the Stop event"},
			runner.Notice{Kind: runner.NoticeInfo, Level: "info", Text: "not worth repeating"},
			runner.AssistantText{MessageID: "m1", Text: "Done."},
			func() runner.TurnCompleted { c := completed(true); c.Model = "claude-opus-4-8"; return c }()}},
		{"expired-approval", true, []runner.Event{started(),
			runner.ToolStarted{ID: "toolu_1", Name: "Bash", Summary: "make deploy"},
			runner.ApprovalRequested{RequestID: "req1", ToolUseID: "toolu_1", Tool: "Bash"},
			runner.ToolFinished{ID: "toolu_1", Name: "Bash", OK: false, NotRun: "permission-rule",
				Permission: &runner.PermissionDecision{Decision: "reject", Source: "user_reject"}},
			func() runner.TurnCompleted {
				c := completed(true)
				c.Denials = []runner.PermissionDenial{{ToolName: "Bash", ToolUseID: "toolu_1", ToolInput: []byte(`{"command":"make deploy"}`)}}
				return c
			}()}},
		{"auto-compaction-and-many-denials", false, []runner.Event{started(),
			runner.CompactionStarted{},
			runner.CompactionFinished{Trigger: "auto", PreTokens: 79267, PostTokens: 15092},
			func() runner.TurnCompleted { c := completed(true); c.Denials = denials; return c }()}},
		{"retries-then-failure", false, []runner.Event{started(),
			runner.APIRetry{Attempt: 1, MaxRetries: 3, Delay: time.Second, Status: 529, Error: "overloaded"},
			runner.APIRetry{Attempt: 2, MaxRetries: 3, Delay: 2 * time.Second},
			runner.TurnCompleted{OK: false, Subtype: "success", TerminalReason: "api_error", APIErrorStatus: 529,
				Answer: "API Error: 529 Overloaded.", Duration: 9 * time.Second}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := render.NewTurn(base)
			at := base
			for _, ev := range tt.evs {
				at = at.Add(time.Second)
				turn.Apply(ev, at)
				if a, ok := ev.(runner.ApprovalRequested); ok && tt.expire {
					assert.True(t, turn.Expire(a.RequestID))
				}
			}
			got := formatFinal(t, render.RenderFinal(*turn.Result, render.FinalMeta{Model: turn.Model, Happened: turn.Happened()}))
			checkRenderGolden(t, "final", "happened-"+tt.name, got)
		})
	}
}

// TestFinalWithoutHappenedStillNamesDenials: a result rendered without
// its Turn (the bridge had none) still lists its refused tool calls.
func TestFinalWithoutHappenedStillNamesDenials(t *testing.T) {
	tc := completed(true)
	tc.Denials = []runner.PermissionDenial{{ToolName: "Write", ToolUseID: "t1", ToolInput: []byte(`{"file_path":"/etc/passwd"}`)}}
	chunks := render.RenderFinal(tc, render.FinalMeta{})
	require.Len(t, chunks, 1)
	assert.Contains(t, chunks[0], "🚫 Write /etc/passwd: not allowed")
}

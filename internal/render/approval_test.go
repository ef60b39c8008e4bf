package render_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// testButtons is callback data shaped like the bridge's short tokens.
func testButtons(req runner.ApprovalRequested) render.ApprovalButtons {
	b := render.ApprovalButtons{Approve: "ap:k3Xq9Z", Deny: "dn:k3Xq9Z", Always: "al:k3Xq9Z"}
	i := 0
	for _, q := range req.Questions {
		for range q.Options {
			b.Options = append(b.Options, fmt.Sprintf("op:k3Xq9Z:%d", i))
			i++
		}
	}
	return b
}

func rawJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

const bashSuggestions = `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"echo hi *"}],"behavior":"allow","destination":"localSettings"},{"type":"addDirectories","directories":["/home/dev/project"],"destination":"session"}]`

func approvalCases(t *testing.T) []struct {
	name string
	req  runner.ApprovalRequested
} {
	bash := func(cmd string) json.RawMessage {
		return rawJSON(t, map[string]any{"command": cmd, "description": "Write hi to out.txt"})
	}
	edit := rawJSON(t, map[string]any{"file_path": "/home/dev/project/main.go",
		"old_string": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n",
		"new_string": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n\tfmt.Println(\"bye\")\n}\n"})
	var longOld, longNew strings.Builder
	for i := range 80 {
		fmt.Fprintf(&longOld, "old line %d <tag> & stuff\n", i)
		fmt.Fprintf(&longNew, "new line %d\n", i)
	}
	write := rawJSON(t, map[string]any{"file_path": "/home/dev/project/README.md",
		"content": strings.Repeat("# Title <b>\n\nSome text & more.\n", 12)})
	question := []runner.Question{{Question: "Which colour should the button be?", Header: "Colour",
		Options: []runner.QuestionOption{{Label: "Red", Description: "A red button"}, {Label: "Blue", Description: "A blue button"}}}}
	twoQuestions := append(question, runner.Question{Question: "Which size?", Header: "Size", MultiSelect: true,
		Options: []runner.QuestionOption{{Label: "Small"}, {Label: "Large", Description: "Twice as <big>"}}})
	plan := "## Plan\n1. Make the button.\n2. Colour it `#ff0000`.\n\n```go\nfunc Button() {}\n```\n"

	return []struct {
		name string
		req  runner.ApprovalRequested
	}{
		{"bash", runner.ApprovalRequested{RequestID: "r1", ToolUseID: "t1", Tool: "Bash", DisplayName: "Bash",
			Input: bash("echo hi > out.txt"), Description: "Write hi to out.txt", Summary: "echo hi > out.txt"}},
		{"bash-with-suggestions", runner.ApprovalRequested{RequestID: "r1", ToolUseID: "t1", Tool: "Bash", DisplayName: "Bash",
			Input: bash("echo hi > out.txt"), Suggestions: json.RawMessage(bashSuggestions),
			BlockedPath: "/home/dev/project/out.txt", Description: "Write hi to out.txt", Summary: "echo hi > out.txt"}},
		{"bash-long-command", runner.ApprovalRequested{RequestID: "r1", Tool: "Bash",
			Input: bash(strings.Repeat("echo '<script>&' && ", 400))}},
		{"edit", runner.ApprovalRequested{RequestID: "r2", Tool: "Edit", DisplayName: "Edit", Input: edit,
			Suggestions: json.RawMessage(`[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`)}},
		{"edit-long", runner.ApprovalRequested{RequestID: "r2", Tool: "Edit", Input: rawJSON(t, map[string]any{
			"file_path": "/x.go", "old_string": longOld.String(), "new_string": longNew.String(), "replace_all": true})}},
		{"multi-edit", runner.ApprovalRequested{RequestID: "r2", Tool: "MultiEdit", Input: rawJSON(t, map[string]any{
			"file_path": "/x.go", "edits": []map[string]any{{"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": "c\ne"}}})}},
		{"write", runner.ApprovalRequested{RequestID: "r3", Tool: "Write", DisplayName: "Write", Input: write,
			Suggestions: json.RawMessage(`[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`),
			BlockedPath: "/home/dev/project/README.md"}},
		{"exit-plan-mode", runner.ApprovalRequested{RequestID: "r4", Tool: "ExitPlanMode", Interactive: true,
			Input: rawJSON(t, map[string]any{"plan": plan}), Plan: &runner.PlanApproval{Plan: plan, PlanFile: "/home/dev/.claude/plans/button.md"}}},
		{"exit-plan-mode-empty", runner.ApprovalRequested{RequestID: "r4", Tool: "ExitPlanMode", Interactive: true,
			Input: json.RawMessage(`{}`), Plan: &runner.PlanApproval{}, Summary: "plan ready for review"}},
		{"exit-plan-mode-huge", runner.ApprovalRequested{RequestID: "r4", Tool: "ExitPlanMode", Interactive: true,
			Plan: &runner.PlanApproval{Plan: strings.Repeat("## Step\nDo the <thing> & then **more** of it.\n\n", 300)}}},
		{"ask-user-question", runner.ApprovalRequested{RequestID: "r5", Tool: "AskUserQuestion", Interactive: true,
			Input: rawJSON(t, map[string]any{"questions": question}), Questions: question}},
		{"ask-two-questions", runner.ApprovalRequested{RequestID: "r5", Tool: "AskUserQuestion", Interactive: true,
			Input: rawJSON(t, map[string]any{"questions": twoQuestions}), Questions: twoQuestions}},
		{"unknown-tool", runner.ApprovalRequested{RequestID: "r6", Tool: "mcp__github__create_issue", DisplayName: "github: create issue",
			Input:       rawJSON(t, map[string]any{"repo": "untether/untether", "title": "Bug <script>&", "labels": []string{"a", "b"}}),
			Suggestions: json.RawMessage(`[{"type":"addRules","rules":[{"toolName":"mcp__github__create_issue"}],"behavior":"allow","destination":"projectSettings"}]`)}},
		{"hostile", runner.ApprovalRequested{RequestID: "r7", Tool: hostile, DisplayName: hostile, Input: json.RawMessage(`"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"`),
			Description: hostile, BlockedPath: hostile, Summary: hostile,
			Suggestions: rawJSON(t, []map[string]any{{"type": "addRules", "rules": []map[string]string{{"toolName": hostile, "ruleContent": hostile}}, "behavior": "allow", "destination": hostile}})}},
		{"not-json-input", runner.ApprovalRequested{RequestID: "r8", Tool: "Bash", Input: json.RawMessage(`{"command": "ls", broken`)}},
		// decision_reason may carry ANSI colour codes; they never reach Telegram.
		{"bash-safety-check-reason", runner.ApprovalRequested{RequestID: "r9", ToolUseID: "t9", Tool: "Bash", DisplayName: "Bash",
			Input: bash("rm -rf ./build"), ReasonType: "safetyCheck", Reason: "\x1b[33mrm -rf\x1b[0m removes files <recursively> & for good"}},
	}
}

func TestApprovalGolden(t *testing.T) {
	at := base.Add(5*time.Minute + 9*time.Second)
	for _, tc := range approvalCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			html, kb := render.RenderApproval(tc.req, testButtons(tc.req))
			checkMessage(t, html)
			checkKeyboard(t, kb)
			fmt.Fprintf(&b, "── request · %d visible ──\n%s\n%s", render.VisibleLen(html), html, formatKeyboard(kb))
			outcome := render.DecisionApproved
			switch tc.req.Tool {
			case "AskUserQuestion":
				outcome = render.Answered(tc.req.Questions[0].Options[1].Label)
			case "Edit", "Write":
				outcome = render.DecisionAlwaysAllowed
			case "ExitPlanMode":
				outcome = render.DecisionDenied
			}
			decided := render.RenderApprovalDecided(tc.req, outcome, "@alice <admin>", at)
			checkMessage(t, decided)
			fmt.Fprintf(&b, "── decided · %d visible ──\n%s\n", render.VisibleLen(decided), decided)
			checkRenderGolden(t, "approval", tc.name, b.String())
		})
	}
}

// TestApprovalTranscripts renders the approvals of real captures.
func TestApprovalTranscripts(t *testing.T) {
	for _, name := range []string{"c1-bash-allow", "c5-write-mode-default", "c8-read-then-edit-default-mode", "i1-plan-mode-exitplanmode-askuserquestion",
		"k5-close-stdin-while-bash-runs"} {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			for _, te := range transcriptEvents(t, name) {
				req, ok := te.ev.(runner.ApprovalRequested)
				if !ok {
					continue
				}
				html, kb := render.RenderApproval(req, testButtons(req))
				checkMessage(t, html)
				checkKeyboard(t, kb)
				fmt.Fprintf(&b, "── line %d %s ──\n%s\n%s", te.line, req.Tool, html, formatKeyboard(kb))
			}
			require.NotZero(t, b.Len(), "no approvals in %s", name)
			checkRenderGolden(t, "approval", "transcript-"+name, b.String())
		})
	}
}

func TestApprovalAlwaysButton(t *testing.T) {
	tests := []struct {
		name        string
		suggestions string
		always      string
		want        string // the always button's text; "" for none
	}{
		{"rule", bashSuggestions, "al:1", "🔓 Always allow Bash(echo hi *) +1"},
		{"accept edits", `[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`, "al:1", "🔓 Accept edits this session"},
		{"directory", `[{"type":"addDirectories","directories":["/srv"],"destination":"session"}]`, "al:1", "🔓 Always allow access to /srv"},
		{"rule without content", `[{"type":"addRules","rules":[{"toolName":"WebFetch"}],"behavior":"allow"}]`, "al:1", "🔓 Always allow WebFetch"},
		{"unknown shape still offered", `[{"type":"somethingNew"}]`, "al:1", "🔓 Always allow"},
		{"no callback data", bashSuggestions, "", ""},
		{"absent", ``, "al:1", ""},
		{"null", `null`, "al:1", ""},
		{"empty array", `[]`, "al:1", ""},
		{"object, not array", `{"type":"setMode"}`, "al:1", ""},
		{"not JSON", `[{`, "al:1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := runner.ApprovalRequested{RequestID: "r", Tool: "Bash", Input: json.RawMessage(`{"command":"echo hi"}`),
				Suggestions: json.RawMessage(tt.suggestions)}
			_, kb := render.RenderApproval(req, render.ApprovalButtons{Approve: "ap:1", Deny: "dn:1", Always: tt.always})
			checkKeyboard(t, kb)
			require.NotEmpty(t, kb.Rows)
			assert.Equal(t, []render.Button{{Text: "✅ Approve", CallbackData: "ap:1"}, {Text: "❌ Deny", CallbackData: "dn:1"}}, kb.Rows[0])
			if tt.want == "" {
				assert.Len(t, kb.Rows, 1)
				return
			}
			require.Len(t, kb.Rows, 2)
			assert.Equal(t, []render.Button{{Text: tt.want, CallbackData: tt.always}}, kb.Rows[1])
		})
	}
}

func TestApprovalKeyboards(t *testing.T) {
	q := []runner.Question{{Question: "Colour?", Options: []runner.QuestionOption{{Label: "Red"}, {Label: "Blue"}, {Label: " "}}}}
	tests := []struct {
		name string
		req  runner.ApprovalRequested
		b    render.ApprovalButtons
		want [][]render.Button
	}{
		{"plan labels", runner.ApprovalRequested{Tool: "ExitPlanMode"}, render.ApprovalButtons{Approve: "a", Deny: "d", Always: "x"},
			[][]render.Button{{{Text: "✅ Approve plan", CallbackData: "a"}, {Text: "📝 Keep planning", CallbackData: "d"}}}},
		{"one button per option", runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: q},
			render.ApprovalButtons{Deny: "d", Options: []string{"o0", "o1", "o2"}},
			[][]render.Button{{{Text: "Red", CallbackData: "o0"}}, {{Text: "Blue", CallbackData: "o1"}}, {{Text: "Option 3", CallbackData: "o2"}},
				{{Text: "✖ Skip question", CallbackData: "d"}}}},
		{"options without data are left out", runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: q},
			render.ApprovalButtons{Options: []string{"o0"}},
			[][]render.Button{{{Text: "Red", CallbackData: "o0"}}}},
		{"buttons without data are left out", runner.ApprovalRequested{Tool: "Bash"}, render.ApprovalButtons{Approve: "a"},
			[][]render.Button{{{Text: "✅ Approve", CallbackData: "a"}}}},
		{"no data, no keyboard", runner.ApprovalRequested{Tool: "Bash"}, render.ApprovalButtons{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, kb := render.RenderApproval(tt.req, tt.b)
			checkKeyboard(t, kb)
			assert.Equal(t, tt.want, kb.Rows)
		})
	}
}

func TestApprovalDecidedOutcomes(t *testing.T) {
	req := runner.ApprovalRequested{RequestID: "r", Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`)}
	at := time.Date(2026, 9, 28, 14, 5, 9, 0, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		outcome render.Decision
		by      string
		at      time.Time
		want    string
	}{
		{render.DecisionApproved, "@alice", at, "✅ <b>Approved</b> by @alice · Sep 28 12:05:09 UTC"},
		{render.DecisionDenied, "", at, "❌ <b>Denied</b> · Sep 28 12:05:09 UTC"},
		{render.DecisionAlwaysAllowed, "@bob", time.Time{}, "🔓 <b>Always allowed</b> by @bob"},
		{render.Answered("Blue <b>"), "@bob", time.Time{}, "💬 <b>Answered: Blue &lt;b&gt;</b> by @bob"},
		{render.DecisionExpired, "", time.Time{}, "⌛ <b>Expired</b>"},
		{render.DecisionWithdrawn, "", time.Time{}, "↩️ <b>Withdrawn</b>"},
		{render.DecisionInterrupted, "", time.Time{}, "⚠️ <b>Interrupted by restart</b>"},
	}
	for _, tt := range tests {
		t.Run(string(tt.outcome), func(t *testing.T) {
			got := render.RenderApprovalDecided(req, tt.outcome, tt.by, tt.at)
			checkMessage(t, got)
			assert.True(t, strings.HasSuffix(got, "\n\n"+tt.want), got)
			assert.Contains(t, got, "make", "the summary is kept")
		})
	}
}

// FuzzApproval renders arbitrary tool names and inputs.
func FuzzApproval(f *testing.F) {
	f.Add("Bash", `{"command":"ls"}`, bashSuggestions, "desc")
	f.Add("Edit", `{"file_path":"a","old_string":"x\ny","new_string":"x\nz"}`, `[]`, "")
	f.Add("Write", `{"file_path":"a","content":"\xff<&>"}`, `null`, hostile)
	f.Add("ExitPlanMode", `{"plan":"# <x>\n- a"}`, ``, "")
	f.Add("AskUserQuestion", `{"questions":[{"question":"q","options":[{"label":"a"}]}]}`, ``, "")
	f.Add("Other", `[1,2,3]`, `[{"type":"setMode","mode":"x"}]`, "")
	f.Fuzz(func(t *testing.T, tool, input, suggestions, desc string) {
		req := runner.ApprovalRequested{RequestID: "r", Tool: tool, Input: json.RawMessage(input),
			Suggestions: json.RawMessage(suggestions), Description: desc, BlockedPath: desc}
		var in struct {
			Plan      string            `json:"plan"`
			Questions []runner.Question `json:"questions"`
		}
		_ = json.Unmarshal(req.Input, &in)
		req.Questions = in.Questions
		if tool == "ExitPlanMode" {
			req.Plan = &runner.PlanApproval{Plan: in.Plan}
		}
		html, kb := render.RenderApproval(req, testButtons(req))
		decided := render.RenderApprovalDecided(req, render.Decision(desc), desc, base)
		for _, s := range []string{html, decided} {
			if err := validateTelegramHTML(s); err != nil {
				t.Fatalf("%v\n%s", err, s)
			}
			if l := render.VisibleLen(s); l > render.SafeChunkLimit {
				t.Fatalf("visible length %d", l)
			}
		}
		if err := kb.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

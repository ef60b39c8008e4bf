package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// Conformance of a CLI release: every scenario below runs in every test run
// (CI runs them all against the pinned version, in about 25 s), and
// `make conformance CLAUDE_VERSION=x.y.z` runs them against another release.
// The scenarios run the real CLI raw (see capture_test.go) and check that
//   - every line it prints decodes: no non-JSON line, no known frame that
//     decodes only partly;
//   - the frames untether relies on in each scenario are still there;
//   - no frame family appears that no replay golden under
//     testdata/transcripts covers. A new family is decoded tolerantly (as an
//     Unknown event, see TestUnknownFramesAreTolerated) but must get a golden:
//     rerun with UNTETHER_CAPTURE_DIR=testdata/transcripts, keep the capture
//     that shows it, and run TestReplayTranscripts with -update.

// lineFamilies names the shapes one stdout line shows, finer than
// Frame.Kind: the type (with the subtype of system, result, control_request
// and control_response frames), each content block type of a message, and
// the event, delta and block types inside stream_event frames. A line that
// is not a JSON object is "not-json".
func lineFamilies(line []byte) []string {
	var f struct {
		Type     string `json:"type"`
		Subtype  string `json:"subtype"`
		Request  struct{ Subtype string }
		Response struct{ Subtype string }
		Message  struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Event struct {
			Type         string `json:"type"`
			Delta        struct{ Type string }
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
		} `json:"event"`
	}
	if json.Unmarshal(line, &f) != nil || f.Type == "" {
		return []string{"not-json"}
	}
	kind := f.Type
	switch f.Type {
	case "system", "result":
		kind += "/" + f.Subtype
	case "control_request":
		kind += "/" + f.Request.Subtype
	case "control_response":
		kind += "/" + f.Response.Subtype
	}
	out := []string{kind}
	var blocks []struct{ Type string }
	if json.Unmarshal(f.Message.Content, &blocks) == nil {
		for _, b := range blocks {
			out = append(out, f.Type+"/block/"+b.Type)
		}
	}
	if f.Type == "stream_event" {
		out = append(out, "stream_event/"+f.Event.Type)
		if f.Event.Delta.Type != "" {
			out = append(out, "stream_event/delta/"+f.Event.Delta.Type)
		}
		if f.Event.ContentBlock.Type != "" {
			out = append(out, "stream_event/block/"+f.Event.ContentBlock.Type)
		}
	}
	return out
}

// familyKeys maps each family of a set of lines to the top-level keys its
// lines carried, to report fields a release added.
type familyKeys map[string]map[string]bool

func (fk familyKeys) add(line []byte) {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(line, &obj)
	for _, fam := range lineFamilies(line) {
		if fk[fam] == nil {
			fk[fam] = map[string]bool{}
		}
		for k := range obj {
			fk[fam][k] = true
		}
	}
}

// names lists the families, sorted.
func (fk familyKeys) names() []string {
	out := make([]string, 0, len(fk))
	for fam := range fk {
		out = append(out, fam)
	}
	sort.Strings(out)
	return out
}

// goldenFamilies is what the replay goldens under testdata/transcripts cover.
func goldenFamilies(t *testing.T) familyKeys {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	fk := familyKeys{}
	for _, p := range paths {
		for _, l := range transcriptOutLines(t, p) {
			fk.add(l)
		}
	}
	return fk
}

// conformanceScript is realScript plus replies that make the CLI show more
// frame families: thinking, OAuth rate-limit headers.
func conformanceScript() fakeapi.Script {
	s := realScript()
	s.Rules = append([]fakeapi.Rule{
		{Name: "think", When: fakeapi.Match{PromptContains: "THINK"},
			Replies: []fakeapi.Reply{fakeapi.Blocks(fakeapi.ThinkingBlock("Let me weigh apples against pears."), fakeapi.TextBlock("Apples."))}},
		{Name: "limits", When: fakeapi.Match{PromptContains: "LIMITS"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("Close to the limit.")}, Headers: map[string]string{
				"anthropic-ratelimit-unified-status":               "allowed_warning",
				"anthropic-ratelimit-unified-reset":                "1796008727",
				"anthropic-ratelimit-unified-representative-claim": "five_hour",
				"anthropic-ratelimit-unified-5h-status":            "allowed_warning",
				"anthropic-ratelimit-unified-5h-reset":             "1796008727",
				"anthropic-ratelimit-unified-5h-utilization":       "0.92",
				"anthropic-ratelimit-unified-7d-status":            "allowed",
				"anthropic-ratelimit-unified-7d-reset":             "1796500000",
				"anthropic-ratelimit-unified-7d-utilization":       "0.4",
			}}}},
		// A subagent's own request carries the prompt the Task tool gave it.
		{Name: "subagent", When: fakeapi.Match{PromptContains: "SUBTASK"},
			Replies: []fakeapi.Reply{fakeapi.Text("Three files.")}},
	}, s.Rules...)
	s.Rules = append(s.Rules, fakeapi.ToolTurn("DELEGATE", "Task", map[string]any{
		"description": "Count files", "prompt": "SUBTASK count the files", "subagent_type": "general-purpose"}, "The subagent counted three files.")...)
	s.Rules = append(s.Rules, fakeapi.ToolTurn("BGRUN", "Bash", map[string]any{
		"command": "sleep 1; echo bg-done", "description": "Wait in the background", "run_in_background": true}, "Started it in the background.")...)
	return s
}

// withHooks writes user settings with a command hook on SessionStart,
// UserPromptSubmit, PreToolUse and Stop.
func withHooks(t *testing.T, env *claudetest.Env) {
	hook := []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "echo hook-ran"}}}}
	settings := map[string]any{"hooks": map[string]any{
		"SessionStart": hook, "UserPromptSubmit": hook, "Stop": hook,
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "echo pre-tool"}}}},
	}}
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(env.Home, ".claude"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(env.Home, ".claude", "settings.json"), b, 0o600))
}

// conformanceScenarios are the host–CLI exchanges untether depends on.
func conformanceScenarios() []captureScenario {
	partial := []string{"--include-partial-messages"}
	return []captureScenario{
		{name: "text-partial-two-turns", args: partial,
			steps: []captureStep{{prompt: "hello there"}, {prompt: "THINK about fruit"}},
			want: []string{"control_response/success", "system/init", "stream_event/content_block_delta",
				"stream_event/delta/text_delta", "stream_event/delta/thinking_delta", "assistant/block/text",
				"assistant/block/thinking", "command_lifecycle", "result/success"}},
		{name: "bash-allow", steps: []captureStep{{prompt: "BASHRUN please"}},
			want: []string{"assistant/block/tool_use", "control_request/can_use_tool", "user/block/tool_result", "result/success"}},
		{name: "bash-deny", deny: true, steps: []captureStep{{prompt: "BASHRUN please"}},
			want: []string{"control_request/can_use_tool", "user/block/tool_result", "result/success"}},
		{name: "interrupt-streaming", args: partial,
			steps: []captureStep{{prompt: "SLOW please", interrupt: true}, {prompt: "after the interrupt"}},
			want:  []string{"stream_event/delta/text_delta", "result/error_during_execution", "result/success"}},
		{name: "set-mode-then-turn",
			steps: []captureStep{{control: map[string]any{"subtype": "set_permission_mode", "mode": "acceptEdits"}}, {prompt: "hi"}},
			want:  []string{"system/status", "result/success"}},
		{name: "api-retry", opts: []claudetest.Option{claudetest.WithMaxRetries(3)},
			steps: []captureStep{{prompt: "RETRY please"}},
			want:  []string{"system/api_retry", "result/success"}},
		{name: "compact", steps: []captureStep{{prompt: "tell me about apples"}, {prompt: "/compact"}},
			want: []string{"system/status", "system/compact_boundary", "result/success"}},
		{name: "refusal", steps: []captureStep{{prompt: "REFUSE please"}},
			want: []string{"system/model_refusal_no_fallback", "result/success"}},
		{name: "plan-mode", args: []string{"--permission-mode", "plan"}, steps: []captureStep{{prompt: "PLANIT a button"}},
			want: []string{"control_request/can_use_tool", "system/status", "result/success"}},
		{name: "ask-user-question", steps: []captureStep{{prompt: "ASKME which colour"}},
			want: []string{"control_request/can_use_tool", "user/block/tool_result", "result/success"}},
		{name: "subagent", steps: []captureStep{{prompt: "DELEGATE please"}},
			want: []string{"assistant/block/tool_use", "system/task_started", "system/task_notification", "result/success"}},
		{name: "background-bash", steps: []captureStep{{prompt: "BGRUN please"}, {awaitResult: true}},
			want: []string{"system/task_started", "system/task_notification", "result/success"}},
		{name: "hooks", args: []string{"--include-hook-events"}, setup: withHooks,
			steps: []captureStep{{prompt: "BASHRUN please"}},
			want:  []string{"system/hook_started", "system/hook_response", "result/success"}},
		{name: "oauth-rate-limit-headers", opts: []claudetest.Option{claudetest.WithOAuthToken("sk-ant-oat01-conformance")},
			steps: []captureStep{{prompt: "LIMITS please"}},
			want:  []string{"rate_limit_event", "result/success"}},
	}
}

func TestRealCLIConformance(t *testing.T) {
	golden := goldenFamilies(t)
	dir := os.Getenv(envCaptureDir)
	version := claudetest.WantVersion()
	seen := familyKeys{}
	for _, sc := range conformanceScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			c := runCapture(t, conformanceScript(), sc)
			if dir != "" {
				require.NoError(t, writeCapture(c, dir, version, sc.name))
			}
			c.check(t, sc)
			here := familyKeys{}
			for i, line := range c.outLines() {
				here.add(line)
				seen.add(line)
				for _, ev := range replay([][]byte{line}) {
					assert.NotContains(t, ev, " err=", "line %d decodes only partly: %s", i, line)
					assert.False(t, strings.HasPrefix(ev, "000 Warning"), "line %d is not JSON: %s", i, line)
				}
			}
			for _, fam := range sc.want {
				if here[fam] == nil {
					t.Errorf("the CLI no longer prints %s here; it printed %s; stderr:\n%s", fam, strings.Join(here.names(), " "), c.stderr)
				}
			}
		})
	}
	var missing, added []string
	for fam, keys := range seen {
		if golden[fam] == nil {
			missing = append(missing, fam)
			continue
		}
		for k := range keys {
			if !golden[fam][k] {
				added = append(added, fam+"."+k)
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(added)
	if len(added) > 0 {
		// New fields are decoded tolerantly (ignored); listed so a human can
		// decide whether one is worth modelling.
		t.Logf("claude %s: fields no replay golden shows: %s", version, strings.Join(added, ", "))
	}
	assert.Empty(t, missing, "claude %s prints frame families no replay golden covers; capture them with %s=testdata/transcripts and add goldens", version, envCaptureDir)
}

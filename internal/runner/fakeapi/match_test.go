package fakeapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A conversation shaped like the CLI's: a first prompt, a tool call, then a
// user message carrying the tool_result, a system reminder and a new prompt
// merged into it (what the CLI sends after an interrupt).
const convo = `{"model":"claude-opus-5-5","stream":true,"max_tokens":128000,
 "system":[{"type":"text","text":"You are Claude Code."},{"type":"text","text":"Primary working directory: /w"}],
 "tools":[{"name":"Bash"}],
 "messages":[
  {"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"please run it"}]},
  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},
  {"role":"system","content":"queued: SYSTEMONLY"},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"OUTPUT-1"},{"type":"text","text":"next prompt"},{"type":"text","text":"<system-reminder>later</system-reminder>"}]}
 ]}`

// After a tool call: the last block is the tool_result.
const afterTool = `{"model":"m","stream":false,"max_tokens":100,"system":"sys",
 "messages":[{"role":"user","content":"go"},{"role":"assistant","content":[]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"answered: Blue"}]}]}]}`

func TestMatch(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		match Match
		want  bool
	}{
		{"empty matches all", convo, Match{}, true},
		{"prompt skips reminders", convo, Match{PromptContains: "next prompt"}, true},
		{"prompt is the last block only", convo, Match{PromptContains: "please run it"}, false},
		{"prompt not a reminder", convo, Match{PromptContains: "later"}, false},
		{"last is not tool_result", convo, Match{LastIsToolResult: Bool(false)}, true},
		{"last is tool_result (false)", convo, Match{LastIsToolResult: Bool(true)}, false},
		{"last is tool_result", afterTool, Match{LastIsToolResult: Bool(true)}, true},
		{"prompt reads tool_result", afterTool, Match{PromptContains: "tool_result: answered: Blue"}, true},
		{"user_contains last message", convo, Match{UserContains: "OUTPUT-1"}, true},
		{"user_contains not earlier messages", convo, Match{UserContains: "please run it"}, false},
		{"any_user_contains earlier", convo, Match{AnyUserContains: "please run it"}, true},
		{"any_user_contains ignores system role", convo, Match{AnyUserContains: "SYSTEMONLY"}, false},
		{"not_any_user_contains holds", convo, Match{NotAnyUserContains: "absent"}, true},
		{"not_any_user_contains fails", convo, Match{NotAnyUserContains: "please"}, false},
		{"system_contains", convo, Match{SystemContains: "Primary working directory: /w"}, true},
		{"system_contains string form", afterTool, Match{SystemContains: "sys"}, true},
		{"system_contains absent", convo, Match{SystemContains: "plan mode"}, false},
		{"not_system_contains", convo, Match{NotSystemContains: "plan mode"}, true},
		{"not_system_contains fails", convo, Match{NotSystemContains: "Claude Code"}, false},
		{"model_contains", convo, Match{ModelContains: "opus"}, true},
		{"model_contains fails", convo, Match{ModelContains: "haiku"}, false},
		{"tool_result anywhere in last", convo, Match{ToolResult: Bool(true)}, true},
		{"tool_result false", convo, Match{ToolResult: Bool(false)}, false},
		{"has_tools", convo, Match{HasTools: Bool(true)}, true},
		{"has_tools false", afterTool, Match{HasTools: Bool(false)}, true},
		{"stream", convo, Match{Stream: Bool(true)}, true},
		{"stream false", afterTool, Match{Stream: Bool(true)}, false},
		{"max_tokens_le", afterTool, Match{MaxTokensLE: 100}, true},
		{"max_tokens_le fails", convo, Match{MaxTokensLE: 100}, false},
		{"max_tokens_gt", convo, Match{MaxTokensGT: 100}, true},
		{"max_tokens_gt fails", afterTool, Match{MaxTokensGT: 100}, false},
		{"all fields must hold", convo, Match{PromptContains: "next prompt", ModelContains: "haiku"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mb, err := parseMessagesBody([]byte(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.want, tc.match.matches(mb))
		})
	}
}

func TestMatchPathThroughServer(t *testing.T) {
	// A rule for another path never answers /v1/messages.
	s := New(t, Script{Rules: []Rule{{Name: "other", When: Match{Path: "/v1/other"}, Replies: []Reply{Text("no")}}}})
	post(t, s.URL(), userBody(true, "x"))
	assert.Equal(t, "default", s.Requests()[0].Rule)
}

func TestRequestViewsOfConversation(t *testing.T) {
	r := Request{Method: "POST", Path: "/v1/messages", Body: []byte(convo)}
	assert.Equal(t, "next prompt", r.LastPrompt())
	assert.Equal(t, []ToolResult{{ToolUseID: "toolu_1", Text: "OUTPUT-1"}}, r.ToolResults())
	assert.Equal(t, "You are Claude Code.\nPrimary working directory: /w", r.System())
	msgs := r.Messages()
	require.Len(t, msgs, 4)
	assert.Equal(t, "Bash", msgs[1].Content[0].Name)

	bad := Request{Body: []byte("not json")}
	assert.Empty(t, bad.Messages(), "an unparsable body reads as empty")
	assert.Empty(t, bad.LastPrompt())
}

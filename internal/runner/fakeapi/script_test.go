package fakeapi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadScriptFiles(t *testing.T) {
	bash, err := LoadScript(filepath.Join("testdata", "bash-tool.json"))
	require.NoError(t, err)
	require.Len(t, bash.Rules, 2)
	assert.Equal(t, "after-tool", bash.Rules[0].Name)
	assert.Equal(t, Bool(true), bash.Rules[0].When.LastIsToolResult)
	assert.Equal(t, BlockToolUse, bash.Rules[1].Replies[0].Content[1].Type)
	assert.JSONEq(t, `{"command":"echo hi > out.txt","description":"Write hi"}`, string(bash.Rules[1].Replies[0].Content[1].Input))
	require.NotNil(t, bash.Default)
	assert.True(t, bash.Default.EchoUser)

	errs, err := LoadScript(filepath.Join("testdata", "errors.json"))
	require.NoError(t, err)
	require.Len(t, errs.Rules, 5)
	assert.True(t, errs.Rules[0].Once)
	assert.Equal(t, 529, errs.Rules[0].Replies[0].Status)
	assert.Equal(t, "rejected", errs.Rules[1].Replies[0].Headers["anthropic-ratelimit-unified-status"])
	assert.Equal(t, StopRefusal, errs.Rules[2].Replies[0].StopReason)
	assert.Equal(t, 300, errs.Rules[3].Replies[0].ChunkDelayMs)
	assert.True(t, errs.Rules[4].Replies[0].Hang)
}

func TestLoadScriptMissingFile(t *testing.T) {
	_, err := LoadScript(filepath.Join(t.TempDir(), "nope.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestParseScriptRejects(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		invalid bool // wraps ErrInvalidScript (otherwise a decode error)
	}{
		{"not json", `{`, false},
		{"unknown match field", `{"rules":[{"when":{"prompt_contain":"x"},"replies":[{}]}]}`, false},
		{"rule without replies", `{"rules":[{"name":"r","when":{}}]}`, true},
		{"success status", `{"rules":[{"when":{},"replies":[{"status":200}]}]}`, true},
		{"unknown block type", `{"rules":[{"when":{},"replies":[{"content":[{"type":"image"}]}]}]}`, true},
		{"tool_use without name", `{"rules":[{"when":{},"replies":[{"content":[{"type":"tool_use"}]}]}]}`, true},
		{"bad capture", `{"rules":[{"when":{},"replies":[{"capture":{"x":"("}}]}]}`, true},
		{"bad default", `{"default":{"delay_ms":-1}}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tc.json))
			require.Error(t, err)
			assert.Equal(t, tc.invalid, errors.Is(err, ErrInvalidScript), "%v", err)
		})
	}
}

func TestParseScriptAccepts(t *testing.T) {
	s, err := ParseScript([]byte(`{"rules":[{"name":"a","when":{"stream":true,"max_tokens_gt":10},"replies":[{"content":[{"type":"thinking","thinking":"t"},{"type":"redacted_thinking","data":"d"},{"type":"text","text":"x"}],"stop_reason":"max_tokens"}]}]}`))
	require.NoError(t, err)
	require.Len(t, s.Rules, 1)
	assert.Equal(t, Bool(true), s.Rules[0].When.Stream)
	assert.Equal(t, 10, s.Rules[0].When.MaxTokensGT)
	assert.Equal(t, StopMaxTokens, s.Rules[0].Replies[0].StopReason)
}

func TestConstructors(t *testing.T) {
	assert.Equal(t, Reply{Content: []Block{{Type: BlockText, Text: "hi"}}}, Text("hi"))
	assert.Equal(t, Reply{Status: 529}, Error(529))
	assert.Equal(t, Reply{EchoUser: true}, Echo())
	assert.Equal(t, Reply{Hang: true}, Hang())
	tu := ToolUse("AskUserQuestion", map[string]any{"questions": []any{map[string]any{"question": "Which?"}}})
	require.Len(t, tu.Content, 1)
	assert.Equal(t, "AskUserQuestion", tu.Content[0].Name)
	assert.JSONEq(t, `{"questions":[{"question":"Which?"}]}`, string(tu.Content[0].Input))
	assert.Panics(t, func() { ToolUseBlock("X", map[string]any{"c": make(chan int)}) })
	require.NoError(t, Script{Rules: []Rule{{Replies: []Reply{tu, Text("x"), Blocks(ThinkingBlock("t"))}}}}.Validate())
}

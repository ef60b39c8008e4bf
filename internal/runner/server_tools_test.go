package runner

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestServerToolResult(t *testing.T) {
	tests := []struct {
		name    string
		block   string
		ok      bool
		preview string
	}{
		{"search results", `{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"type":"web_search_result","title":"A","url":"https://a.example/x"}]}`,
			true, "1 result: A (a.example)"},
		{"search error", `{"type":"web_search_tool_result","tool_use_id":"s1","content":{"type":"web_search_tool_result_error","error_code":"too_many_requests"}}`,
			false, "error: too_many_requests"},
		{"fetch", `{"type":"web_fetch_tool_result","tool_use_id":"s1","content":{"type":"web_fetch_result","url":"https://go.dev/doc","content":{"type":"document"}}}`,
			true, "fetched https://go.dev/doc"},
		{"fetch error", `{"type":"web_fetch_tool_result","tool_use_id":"s1","content":{"type":"web_fetch_tool_error","error_code":"url_not_accessible"}}`,
			false, "error: url_not_accessible"},
		{"code ran", `{"type":"code_execution_tool_result","tool_use_id":"s1","content":{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0}}`,
			true, "42"},
		{"code failed", `{"type":"bash_code_execution_tool_result","tool_use_id":"s1","content":{"type":"bash_code_execution_result","stdout":"","stderr":"boom","return_code":2}}`,
			false, "exit 2 boom"},
		{"advisor, tool_result shape", `{"type":"advisor_tool_result","tool_use_id":"s1","content":"Consider a cache."}`,
			true, "Consider a cache."},
		{"advisor error", `{"type":"advisor_tool_result","tool_use_id":"s1","content":[{"type":"text","text":"unavailable"}],"is_error":true}`,
			false, "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b ContentBlock
			if err := json.Unmarshal([]byte(tt.block), &b); err != nil {
				t.Fatal(err)
			}
			assert.True(t, isServerToolResult(b.Type))
			ok, preview := serverToolResult(b)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.preview, preview)
		})
	}
	assert.False(t, isServerToolResult("tool_result"), "a client tool's result comes in a user message")
}

package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return b.String()
}

func toolReq(t *testing.T, tool string, input map[string]any) runner.ApprovalRequested {
	raw, err := json.Marshal(input)
	require.NoError(t, err)
	return runner.ApprovalRequested{Tool: tool, DisplayName: tool, Input: raw}
}

func TestFullDiffButtonOnlyWhenThePreviewIsCut(t *testing.T) {
	tests := []struct {
		name      string
		req       runner.ApprovalRequested
		truncated bool
	}{
		{"small edit", toolReq(t, "Edit", map[string]any{"file_path": "/p/a.go", "old_string": "a\n", "new_string": "b\n"}), false},
		{"edit over the side limit", toolReq(t, "Edit", map[string]any{"file_path": "/p/a.go", "old_string": "x\n", "new_string": numbered("new", 40)}), true},
		{"edit over the message", toolReq(t, "Edit", map[string]any{"file_path": "/p/a.go", "old_string": strings.Repeat("o", 3000), "new_string": strings.Repeat("n", 3000)}), true},
		{"multi-edit, one long", toolReq(t, "MultiEdit", map[string]any{"file_path": "/p/a.go", "edits": []any{
			map[string]any{"old_string": "a", "new_string": "b"}, map[string]any{"old_string": "c", "new_string": numbered("x", 31)}}}), true},
		{"short write", toolReq(t, "Write", map[string]any{"file_path": "/p/n.txt", "content": numbered("w", 20)}), false},
		{"long write", toolReq(t, "Write", map[string]any{"file_path": "/p/n.txt", "content": numbered("w", 21)}), true},
		{"bash", toolReq(t, "Bash", map[string]any{"command": strings.Repeat("echo hi; ", 1000)}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.truncated, PreviewTruncated(tt.req))
			_, kb := RenderApproval(tt.req, ApprovalButtons{Approve: "a:t", Deny: "d:t", FullDiff: "f:t"})
			has := false
			for _, row := range kb.Rows {
				for _, b := range row {
					has = has || b.CallbackData == "f:t"
				}
			}
			assert.Equal(t, tt.truncated, has, "the button is offered exactly when the preview is cut")
		})
	}
}

func TestFullDiffHasTheWholeChange(t *testing.T) {
	name, diff, ok := FullDiff(toolReq(t, "Edit", map[string]any{"file_path": "/p/src/main.go",
		"old_string": "keep\n" + numbered("old", 35) + "tail\n", "new_string": "keep\n" + numbered("new", 45) + "tail\n"}))
	require.True(t, ok)
	assert.Equal(t, "main.go.diff", name)
	assert.True(t, strings.HasPrefix(diff, "--- /p/src/main.go\n+++ /p/src/main.go (proposed)\n"))
	assert.Contains(t, diff, "- old line 34\n")
	assert.Contains(t, diff, "+ new line 44\n")
	assert.Contains(t, diff, "  keep\n")
	assert.NotContains(t, diff, "more lines")

	name, diff, ok = FullDiff(toolReq(t, "Write", map[string]any{"file_path": "/p/notes.md", "content": numbered("w", 30)}))
	require.True(t, ok)
	assert.Equal(t, "notes.md.diff", name)
	assert.Equal(t, 30, strings.Count(diff, "\n+ w line"))

	_, _, ok = FullDiff(toolReq(t, "Bash", map[string]any{"command": "ls"}))
	assert.False(t, ok)
}

package bridge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// A failing hook is not invisible (issue 24 §4): with the real CLI, a
// PreToolUse hook that blocks Bash (exit 2) shows on the call's row, with
// what the hook wrote to stderr, in the progress message and the answer;
// a Stop hook that fails is named in the answer's notices.
func TestFailingHooksAreShown(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	settings := filepath.Join(t.TempDir(), "settings.json")
	raw, err := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{
			map[string]any{"type": "command", "command": "echo 'no shell commands in this project' >&2; exit 2"}}}},
		"Stop": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": "echo 'lint failed' >&2; exit 1"}}}},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(settings, raw, 0o600))
	// The answer after the refused call streams slowly, so the progress
	// message is out, showing the row, before it ends.
	rules := fakeapi.ToolTurn("HOOKED", "Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"}, "")
	rules[0].Replies = []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("The hook said no. " + strings.Repeat("Noted. ", 40))}, ChunkDelayMs: 150}}
	r := newRig(t, withRules(rules), withConfig(func(c *config.Config) {
		c.Claude.ExtraArgs = append(c.Claude.ExtraArgs, "--settings", settings)
	}))
	in := r.say(chat, alice, "HOOKED please")
	answer := r.finalAnswer(chat, in.ID, "The hook said no.")
	const blocked = "blocked by a hook: no shell commands in this project"
	assert.Contains(t, answer.Text, blocked, "the answer says why the call did not run")
	assert.Contains(t, answer.Text, "A Stop hook reported a problem")
	assert.NotContains(t, answer.Text, "ctrl+o", "no terminal key hint")
	shown := false
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if m.ReplyTo == in.ID && m.ID != answer.ID && strings.Contains(m.Text, blocked) {
			shown = true
		}
	}
	assert.True(t, shown, "the progress message shows it too")
	assert.NoFileExists(t, filepath.Join(r.claude.Workdir, "out.txt"), "the hook really blocked it")
}

package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Entries shaped as the CLI 2.1.328 writes them (see testdata/cli for
// real ones), for tests that need a particular sequence.

func jsonLine(t testing.TB, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b) + "\n"
}

// typed is a prompt typed at an interactive terminal.
func typed(t testing.TB, uuid, text string) string {
	return jsonLine(t, map[string]any{
		"type": "user", "uuid": uuid, "timestamp": "2026-12-01T19:35:13.000Z",
		"message":      map[string]any{"role": "user", "content": text},
		"promptSource": "typed", "turnOrigin": "human", "entrypoint": "cli",
		"turnPosition": map[string]any{"promptIndex": 1, "turnIndex": 3},
		"sessionId":    "741f4ad2-102a-49d9-bd7d-a37b8e4e9cc4",
	})
}

// sdkPrompt is a prompt of a -p run (untether's, or a person's claude -p).
func sdkPrompt(t testing.TB, uuid, text string) string {
	return jsonLine(t, map[string]any{
		"type": "user", "uuid": uuid, "timestamp": "2026-12-01T19:32:54.000Z",
		"message":      map[string]any{"role": "user", "content": text},
		"promptSource": "sdk", "turnOrigin": "sdk", "entrypoint": "sdk-cli",
	})
}

func answer(t testing.TB, uuid, text string) string {
	return jsonLine(t, map[string]any{
		"type": "assistant", "uuid": uuid, "timestamp": "2026-12-01T19:35:14.000Z", "entrypoint": "cli",
		"message": map[string]any{"id": "msg_" + uuid, "role": "assistant", "model": "claude-opus-5-5",
			"content": []any{map[string]any{"type": "text", "text": text}},
			"usage":   map[string]any{"input_tokens": 1000, "output_tokens": 5}},
	})
}

func toolResult(t testing.TB, uuid string) string {
	return jsonLine(t, map[string]any{
		"type": "user", "uuid": uuid, "entrypoint": "cli",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}}},
	})
}

// bookkeeping is what the CLI appends after a turn's result and at exit:
// lines without a uuid.
func bookkeeping(t testing.TB) string {
	return jsonLine(t, map[string]any{"type": "last-prompt", "lastPrompt": "x", "leafUuid": "a1"}) +
		jsonLine(t, map[string]any{"type": "cost-state", "totalCostUSD": 0.01})
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

func appendFile(t testing.TB, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(content)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cli", name))
	require.NoError(t, err)
	return string(b)
}

func texts(turns []Turn) []string {
	var out []string
	for _, tu := range turns {
		out = append(out, tu.Text)
	}
	return out
}

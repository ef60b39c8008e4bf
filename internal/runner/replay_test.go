package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// transcriptRecord is one line of a capture in testdata/transcripts.
type transcriptRecord struct {
	T    float64         `json:"t"`
	Dir  string          `json:"dir"`
	Line json.RawMessage `json:"line"`
}

// transcriptOutLines returns the CLI's stdout lines of a capture, as the
// CLI printed them (a non-JSON line is stored as a JSON string).
func transcriptOutLines(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec transcriptRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "%s", path)
		if rec.Dir != "out" {
			continue
		}
		if len(rec.Line) > 0 && rec.Line[0] == '"' {
			var s string
			require.NoError(t, json.Unmarshal(rec.Line, &s))
			lines = append(lines, []byte(s))
			continue
		}
		lines = append(lines, bytes.Clone(rec.Line))
	}
	require.NoError(t, sc.Err())
	return lines
}

// formatEvent renders an event as one stable golden line.
func formatEvent(ev Event) string {
	name := reflect.TypeOf(ev).Name()
	switch e := ev.(type) {
	case Unknown:
		s := fmt.Sprintf("%s kind=%s raw=%dB", name, e.Kind, len(e.Raw))
		if e.Err != nil {
			s += " err=" + e.Err.Error()
		}
		return s
	case Warning:
		return fmt.Sprintf("%s line=%q err=%v", name, e.Line, e.Err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return name + " <unmarshalable: " + err.Error() + ">"
	}
	return name + " " + string(b)
}

// replay decodes and translates lines the way a session does.
func replay(lines [][]byte) []string {
	tr := NewTranslator(0)
	var out []string
	var evs []Event
	for i, line := range lines {
		evs = evs[:0]
		f, err := DecodeFrame(line)
		evs = decodeEvents(tr, f, err, line, evs)
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%03d %s", i, formatEvent(ev)))
		}
	}
	return out
}

func TestReplayTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	seen := map[string]bool{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			lines := transcriptOutLines(t, path)
			for _, l := range lines {
				if f, err := DecodeFrame(l); f != nil && err == nil {
					seen[f.Kind()] = true
				}
			}
			got := strings.Join(replay(lines), "\n") + "\n"
			golden := filepath.Join("..", "..", "testdata", "transcripts", name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden; run go test ./internal/runner -run TestReplayTranscripts -update")
			require.Equal(t, string(want), got)
		})
	}
	// Every frame family of the protocol appears in at least one transcript,
	// so the goldens above cover them all.
	families := []string{
		"system/init", "system/api_retry", "system/status", "system/compact_boundary",
		"system/informational", "system/model_fallback", "system/model_refusal_fallback",
		"system/model_refusal_no_fallback", "system/permission_denied", "system/task_started",
		"system/task_progress", "system/task_updated", "system/task_notification",
		"system/background_tasks_changed", "system/hook_started", "system/hook_progress",
		"system/hook_response", "system/thinking_tokens", "assistant", "user", "result",
		"rate_limit_event", "tool_progress", "stream_event", "control_request/can_use_tool",
		"control_cancel_request", "control_response", "command_lifecycle", "conversation_reset",
	}
	var missing []string
	for _, f := range families {
		if !seen[f] {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "frame families with no transcript")
}

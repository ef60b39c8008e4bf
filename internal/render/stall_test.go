package render

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

func TestStallNote(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	waiting := NewTurn(now)
	bash := NewTurn(now)
	bash.Apply(runner.ToolStarted{ID: "t1", Name: "Bash", Summary: "npm test"}, now)
	done := NewTurn(now)
	done.Apply(runner.ToolStarted{ID: "t1", Name: "Read", Summary: "a.go"}, now)
	done.Apply(runner.ToolFinished{ID: "t1"}, now)
	tests := []struct {
		name string
		turn *Turn
		idle time.Duration
		want string
	}{
		{"model", waiting, 45*time.Second + 300*time.Millisecond, "⏳ no output for 45s · waiting for the model"},
		{"tool", bash, 6*time.Minute + 20*time.Second, "⏳ no output for 6m · Bash npm test running"},
		{"finished tools are not running", done, 2 * time.Hour, "⏳ no output for 2h · waiting for the model"},
		{"hours and minutes", bash, 2*time.Hour + 10*time.Minute, "⏳ no output for 2h10m · Bash npm test running"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StallNote(tc.turn, tc.idle))
		})
	}
	html, _ := RenderProgress(bash, ProgressOptions{Now: now.Add(6 * time.Minute), Stall: StallNote(bash, 6*time.Minute)})
	assert.Contains(t, html, "⏳ no output for 6m · Bash npm test running")
}

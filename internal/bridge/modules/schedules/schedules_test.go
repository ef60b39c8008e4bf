package schedules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAt(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	now := time.Date(2026, 11, 30, 13, 47, 10, 0, paris)
	tests := []struct {
		args   string
		at     time.Time
		prompt string
		err    string
	}{
		{args: "30m check the deploy", at: now.Add(30 * time.Minute), prompt: "check the deploy"},
		{args: "1h30m  two\nlines", at: now.Add(90 * time.Minute), prompt: "two\nlines"},
		{args: "2d later", at: now.Add(48 * time.Hour), prompt: "later"},
		{args: "15:00 today", at: time.Date(2026, 11, 30, 15, 0, 0, 0, paris), prompt: "today"},
		{args: "09:00 next morning", at: time.Date(2026, 12, 1, 9, 0, 0, 0, paris), prompt: "next morning"},
		{args: "9:05 single digit", at: time.Date(2026, 12, 1, 9, 5, 0, 0, paris), prompt: "single digit"},
		{args: "tomorrow 09:00 standup notes", at: time.Date(2026, 12, 1, 9, 0, 0, 0, paris), prompt: "standup notes"},
		{args: "Tomorrow 23:59 x", at: time.Date(2026, 12, 1, 23, 59, 0, 0, paris), prompt: "x"},
		{args: "2026-12-24 18:00 presents", at: time.Date(2026, 12, 24, 18, 0, 0, 0, paris), prompt: "presents"},
		{args: "", err: "say when"},
		{args: "30m", err: "say what"},
		{args: "soon do it", err: `"soon" is not a delay`},
		{args: "tomorrow 25:00 x", err: `"25:00" is not a time`},
		{args: "-5m x", err: "is not a delay"},
		{args: "2025-01-01 09:00 x", err: "has passed"},
		{args: "400d x", err: "more than a year"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			at, prompt, err := parseAt(tt.args, now)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.at.Equal(at), "at %s, want %s", at, tt.at)
			assert.Equal(t, tt.prompt, prompt)
		})
	}
}

func TestParseEvery(t *testing.T) {
	tests := []struct {
		args, expr, prompt, err string
	}{
		{args: `"0 9 * * 1-5" standup`, expr: "0 9 * * 1-5", prompt: "standup"},
		{args: `“0 9 * * 1-5” smart quotes`, expr: "0 9 * * 1-5", prompt: "smart quotes"},
		{args: `'*/30 * * * *' single`, expr: "*/30 * * * *", prompt: "single"},
		{args: `0 9 * * * unquoted fields`, expr: "0 9 * * *", prompt: "unquoted fields"},
		{args: `@daily summary`, expr: "@daily", prompt: "summary"},
		{args: `@every 2h check`, expr: "@every 2h", prompt: "check"},
		{args: `"0 9 * *" x`, err: "expected exactly 5 fields"},
		{args: `"0 9 * * *`, err: "closing quote"},
		{args: `"0 9 * * *"`, err: "say what"},
		{args: `@every 5s x`, err: "once a minute"},
		{args: ``, err: "say when"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			spec, prompt, err := parseEvery(tt.args)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.expr, spec.String())
			assert.Equal(t, tt.prompt, prompt)
		})
	}
}

package runner

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		name, tool, input string
		want              *Schedule
		summary           string
	}{
		{"wakeup", "ScheduleWakeup", `{"delaySeconds":300,"reason":"build check","prompt":"check if the build finished"}`,
			&Schedule{Tool: "ScheduleWakeup", Delay: 5 * time.Minute, Reason: "build check", Prompt: "check if the build finished"},
			"in 5m: build check"},
		{"delay as a string", "ScheduleWakeup", `{"delaySeconds":"90","prompt":"go on"}`,
			&Schedule{Tool: "ScheduleWakeup", Delay: 90 * time.Second, Prompt: "go on"}, "in 1m30s: go on"},
		{"stop", "ScheduleWakeup", `{"stop":true}`, &Schedule{Tool: "ScheduleWakeup", Stop: true}, "stop the loop"},
		{"cron recurring by default", "CronCreate", `{"cron":"*/5 * * * *","prompt":"poll"}`,
			&Schedule{Tool: "CronCreate", Cron: "*/5 * * * *", Recurring: true, Prompt: "poll"}, "*/5 * * * *: poll"},
		{"cron once", "CronCreate", `{"cron":"30 14 28 2 *","prompt":"remind me","recurring":false}`,
			&Schedule{Tool: "CronCreate", Cron: "30 14 28 2 *", Prompt: "remind me"}, "30 14 28 2 * (once): remind me"},
		{"a bad delay keeps the rest", "ScheduleWakeup", `{"delaySeconds":[1],"reason":"x"}`,
			&Schedule{Tool: "ScheduleWakeup", Reason: "x"}, "x"},
		{"another tool", "Bash", `{"command":"ls"}`, nil, "ls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseSchedule(tt.tool, json.RawMessage(tt.input)))
			assert.Equal(t, tt.summary, ToolSummary(tt.tool, json.RawMessage(tt.input)))
		})
	}
}

func TestScheduleResult(t *testing.T) {
	at, text := scheduleResult(json.RawMessage(`{"scheduledFor":1790500249636,"clampedDelaySeconds":600}`))
	assert.Equal(t, time.UnixMilli(1790500249636).UTC(), at)
	assert.Empty(t, text)
	at, text = scheduleResult(json.RawMessage(`{"id":"1a2b3c4d","humanSchedule":"Every 5 minutes","nextFireAt":1790500249636}`))
	assert.Equal(t, time.UnixMilli(1790500249636).UTC(), at)
	assert.Equal(t, "Every 5 minutes", text)
	at, text = scheduleResult(json.RawMessage(`"Error: no"`))
	assert.True(t, at.IsZero())
	assert.Empty(t, text)
}

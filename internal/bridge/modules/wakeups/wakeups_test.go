package wakeups

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

func TestRearmPromptAsksForTheSameWakeup(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		w    runner.Wakeup
		want []string
	}{
		{"a wake-up still ahead keeps its time", runner.Wakeup{Tool: "ScheduleWakeup", At: now.Add(10*time.Minute + 300*time.Millisecond),
			Reason: "check", Prompt: "look again"},
			[]string{"(/new)", "due at 2026-12-02T10:10:00Z)", `delaySeconds 601, reason "check" and this prompt, verbatim: "look again"`}},
		{"a wake-up whose time passed comes as soon as allowed", runner.Wakeup{Tool: "ScheduleWakeup", At: now.Add(-time.Hour), Prompt: "p"},
			[]string{"which has passed", "delaySeconds 60,"}},
		{"a prompt's quotes and lines stay inside its quotes", runner.Wakeup{Tool: "ScheduleWakeup", At: now.Add(time.Hour),
			Prompt: "say \"hi\"\nthen stop"}, []string{`verbatim: "say \"hi\"\nthen stop"`}},
		{"a cron job is looked for first", runner.Wakeup{Tool: "CronCreate", ID: "ab12", Cron: "*/5 * * * *", Recurring: true, Prompt: "poll"},
			[]string{`CronCreate job ab12 (cron "*/5 * * * *", recurring true, prompt "poll")`, "call CronList first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rearmPrompt(tt.w, "/new", now)
			assert.Contains(t, got, "[untether: ▶️ Re-arm]")
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

func TestFiredOfNamesTheWakeupThatStartedATurn(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	loop := runner.Wakeup{Tool: "ScheduleWakeup", At: at, Prompt: "loop"}
	every := runner.Wakeup{Tool: "CronCreate", ID: "r", Recurring: true, Prompt: "every"}
	soon := runner.Wakeup{Tool: "CronCreate", ID: "s", At: at, Prompt: "soon"}
	later := runner.Wakeup{Tool: "CronCreate", ID: "l", At: at.Add(time.Hour), Prompt: "later"}
	known := []runner.Wakeup{every, later, loop, soon}
	tests := []struct {
		name string
		ev   runner.TurnStarted
		want string
		ok   bool
	}{
		{"a loop wake-up by its time", runner.TurnStarted{Wakeup: runner.WakeupLoop, ScheduledFor: at}, "loop", true},
		{"a loop wake-up of another time is not known", runner.TurnStarted{Wakeup: runner.WakeupLoop, ScheduledFor: at.Add(time.Minute)}, "", false},
		{"a cron fire: the soonest one-shot job", runner.TurnStarted{Wakeup: runner.WakeupScheduled}, "soon", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := firedOf(known, tt.ev)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, w.Prompt)
		})
	}
	w, ok := firedOf([]runner.Wakeup{every}, runner.TurnStarted{Wakeup: runner.WakeupScheduled})
	assert.True(t, ok)
	assert.Equal(t, "⏰ Woken up by the recurring job Claude set: every", heading(w, ok), "no empty schedule")
	every.Schedule = "Every minute"
	assert.Equal(t, "⏰ Woken up by the recurring job Claude set (Every minute): every", heading(every, true))
	assert.Equal(t, "⏰ A wake-up Claude had set fired.", heading(runner.Wakeup{}, false))
}

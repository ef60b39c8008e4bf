package runner

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shapes below are CLI 2.1.328's, from real runs (realcli_wakeup_test.go).

func scheduleCall(id, tool, input string) ToolStarted {
	raw := json.RawMessage(input)
	return ToolStarted{ID: ToolUseID(id), Name: tool, Input: raw, Schedule: parseSchedule(tool, raw)}
}

func scheduleDone(id, tool, result string) ToolFinished {
	raw := json.RawMessage(result)
	ev := ToolFinished{ID: ToolUseID(id), Name: tool, OK: true, CronJobs: cronJobs(tool, raw)}
	if isScheduleTool(tool) {
		ev.FiresAt, ev.ScheduleText = scheduleResult(raw)
	}
	return ev
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func TestWakeupsFollowTheScheduleTools(t *testing.T) {
	now := time.Now()
	in10, in20, in30 := now.Add(10*time.Minute).Truncate(time.Millisecond), now.Add(20*time.Minute).Truncate(time.Millisecond),
		now.Add(30*time.Minute).Truncate(time.Millisecond)
	type step struct {
		ev   Event
		want []string // pending wake-ups as tool:id:prompt, soonest first; a call's start changes nothing
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a loop wake-up, superseded, then stopped", []step{
			{scheduleCall("1", "ScheduleWakeup", `{"delaySeconds":600,"reason":"r","prompt":"first"}`), nil},
			{scheduleDone("1", "ScheduleWakeup", `{"scheduledFor":`+ms(in10)+`,"clampedDelaySeconds":600}`), []string{"ScheduleWakeup::first"}},
			{scheduleCall("2", "ScheduleWakeup", `{"delaySeconds":1200,"reason":"r","prompt":"second"}`), []string{"ScheduleWakeup::first"}},
			{scheduleDone("2", "ScheduleWakeup", `{"scheduledFor":`+ms(in20)+`}`), []string{"ScheduleWakeup::second"}},
			{scheduleCall("3", "ScheduleWakeup", `{"stop":true}`), []string{"ScheduleWakeup::second"}},
			{scheduleDone("3", "ScheduleWakeup", `{"scheduledFor":0,"stopped":true,"cancelledWakeups":1}`), nil},
		}},
		{"cron jobs, one deleted", []step{
			{scheduleCall("1", "CronCreate", `{"cron":"* * * * *","prompt":"poll","recurring":true}`), nil},
			{scheduleDone("1", "CronCreate", `{"id":"aa","humanSchedule":"Every minute","recurring":true,"durable":false,"nextFireAt":`+ms(in20)+`}`),
				[]string{"CronCreate:aa:poll"}},
			{scheduleCall("2", "CronCreate", `{"cron":"0 9 * * *","prompt":"once","recurring":false}`), nil},
			{scheduleDone("2", "CronCreate", `{"id":"bb","humanSchedule":"0 9 * * *","recurring":false,"durable":false,"nextFireAt":`+ms(in10)+`}`),
				[]string{"CronCreate:bb:once", "CronCreate:aa:poll"}},
			{scheduleCall("3", "CronDelete", `{"id":"aa"}`), nil},
			{scheduleDone("3", "CronDelete", `{"id":"aa"}`), []string{"CronCreate:bb:once"}},
		}},
		{"a failed call changes nothing", []step{
			{scheduleCall("1", "CronCreate", `{"cron":"* * * * *","prompt":"poll"}`), nil},
			{ToolFinished{ID: "1", Name: "CronCreate", OK: false}, nil},
		}},
		{"a listing is the truth about cron jobs, not about the loop wake-up", []step{
			{scheduleCall("1", "ScheduleWakeup", `{"delaySeconds":600,"reason":"r","prompt":"loop"}`), nil},
			{scheduleDone("1", "ScheduleWakeup", `{"scheduledFor":`+ms(in10)+`}`), []string{"ScheduleWakeup::loop"}},
			{scheduleCall("2", "CronList", `{}`), nil},
			{scheduleDone("2", "CronList", `{"jobs":[{"id":"cc","cron":"0 0 1 1 *","humanSchedule":"0 0 1 1 *","prompt":"yearly","recurring":true,"durable":false,"nextFireAt":`+
				ms(in30)+`},{"id":"dd","cron":"42 7 * * *","humanSchedule":"Every day at 7:42 AM","prompt":"loop","durable":false,"nextFireAt":`+ms(in10)+`},{"id":7}]}`),
				[]string{"ScheduleWakeup::loop", "CronCreate:cc:yearly"}},
		}},
		{"fires: the loop's by its time, a cron's soonest one-shot", []step{
			{scheduleCall("1", "ScheduleWakeup", `{"delaySeconds":60,"reason":"r","prompt":"loop"}`), nil},
			{scheduleDone("1", "ScheduleWakeup", `{"scheduledFor":`+ms(now.Add(time.Second).Truncate(time.Millisecond))+`}`), []string{"ScheduleWakeup::loop"}},
			{scheduleCall("2", "CronCreate", `{"cron":"* * * * *","prompt":"once","recurring":false}`), nil},
			{scheduleDone("2", "CronCreate", `{"id":"ee","recurring":false,"nextFireAt":`+ms(now.Add(time.Second))+`}`), []string{"ScheduleWakeup::loop", "CronCreate:ee:once"}},
			{scheduleCall("3", "CronCreate", `{"cron":"* * * * *","prompt":"every"}`), nil},
			{scheduleDone("3", "CronCreate", `{"id":"ff","recurring":true,"nextFireAt":`+ms(now.Add(2*time.Second))+`}`),
				[]string{"ScheduleWakeup::loop", "CronCreate:ee:once", "CronCreate:ff:every"}},
			{TurnStarted{Wakeup: WakeupLoop, ScheduledFor: now.Add(time.Hour)}, []string{"ScheduleWakeup::loop", "CronCreate:ee:once", "CronCreate:ff:every"}},
			{TurnStarted{Wakeup: WakeupLoop, ScheduledFor: now.Add(time.Second).Truncate(time.Millisecond)}, []string{"CronCreate:ee:once", "CronCreate:ff:every"}},
			{TurnStarted{Wakeup: WakeupScheduled}, []string{"CronCreate:ff:every"}},
			// A recurring job stays; only its next time is no longer known.
			{TurnStarted{Wakeup: WakeupScheduled}, []string{"CronCreate:ff:every"}},
			{TurnStarted{}, []string{"CronCreate:ff:every"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{}
			for i, st := range tt.steps {
				before := s.Pending()
				s.observeBackground(st.ev)
				if _, started := st.ev.(ToolStarted); started {
					assert.Equal(t, before, s.Pending(), "a call's start changes nothing (step %d)", i)
					continue
				}
				var got []string
				for _, w := range s.Pending().Wakeups {
					got = append(got, w.Tool+":"+w.ID+":"+w.Prompt)
				}
				assert.Equal(t, st.want, got, "after step %d (%T)", i, st.ev)
			}
			s.bg.reset()
		})
	}
}

func TestARecurringJobThatFiredHasNoKnownTime(t *testing.T) {
	s := &Session{}
	now := time.Now()
	s.observeBackground(scheduleCall("1", "CronCreate", `{"cron":"* * * * *","prompt":"every"}`))
	s.observeBackground(scheduleDone("1", "CronCreate", `{"id":"ff","humanSchedule":"Every minute","recurring":true,"nextFireAt":`+ms(now.Add(time.Second))+`}`))
	_, at := s.Background()
	assert.False(t, at.IsZero())
	s.observeBackground(TurnStarted{Wakeup: WakeupScheduled})
	p := s.Pending()
	require.Len(t, p.Wakeups, 1)
	assert.True(t, p.Wakeups[0].At.IsZero())
	assert.Equal(t, "Every minute", p.Wakeups[0].Schedule)
	assert.True(t, p.Wakeups[0].Recurring)
	_, at = s.Background()
	assert.True(t, at.IsZero(), "no time is shown for it")
	assert.True(t, s.bg.pending(now.Add(cronMaxAge-time.Minute)), "awaited until it expires")
	assert.False(t, s.bg.pending(now.Add(cronMaxAge+time.Minute)))
	s.bg.reset()
}

func TestAOneShotWakeupIsAwaitedOnlyUntilItsGraceEnds(t *testing.T) {
	var b backgroundWork
	at := time.Now().Add(time.Minute)
	b.wakes = []Wakeup{{Tool: "ScheduleWakeup", At: at, Prompt: "p"}}
	assert.True(t, b.pending(at.Add(wakeGrace-time.Second)))
	assert.False(t, b.pending(at.Add(wakeGrace)))
	assert.Empty(t, b.snapshot(at.Add(wakeGrace)).Wakeups)
}

func TestCronJobsReadsHostileResults(t *testing.T) {
	for _, raw := range []string{``, `null`, `"text"`, `[]`, `{"jobs":"x"}`, `{"jobs":[null,1,"a",{"id":""}]}`, `{"id":5}`} {
		assert.Empty(t, cronJobs("CronList", json.RawMessage(raw)), raw)
		assert.Empty(t, cronJobs("CronCreate", json.RawMessage(raw)), raw)
	}
	assert.Nil(t, cronJobs("Bash", json.RawMessage(`{"id":"x"}`)))
	got := cronJobs("CronList", json.RawMessage(`{"jobs":[{"id":"a","nextFireAt":"12"},{"id":"b","nextFireAt":{}}]}`))
	require.Len(t, got, 2)
	assert.Equal(t, time.UnixMilli(12).UTC(), got[0].NextFire)
	assert.True(t, got[1].NextFire.IsZero())
}

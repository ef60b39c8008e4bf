package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/fakeapi"
)

// Wake-ups with the real CLI (background.go says what the CLI does with
// them). A cron job fires at the start of a minute, so a test that waits
// for fires waits up to a minute for each.

// fireWait bounds the wait for one cron fire: the next minute, the turn,
// and slack for a loaded machine.
const fireWait = 100 * time.Second

// waitWithin is eventLog.waitFor with its own limit.
func (l *eventLog) waitWithin(t *testing.T, limit time.Duration, from int, what string, pred func(Event) bool) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		for i := from; i < len(l.events); i++ {
			if pred(l.events[i]) {
				l.mu.Unlock()
				return i
			}
		}
		done := l.done
		l.mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s event within %v; got %s", what, limit, summarize(l.snapshot()))
	return -1
}

func wakeupFired(ev Event) bool { ts, ok := ev.(TurnStarted); return ok && ts.Wakeup != "" }

// wakeupScript answers WOKEN (the jobs' prompt) with "Woke up.", and the
// markers with the schedule tools' calls.
func wakeupScript(rules ...fakeapi.Rule) fakeapi.Script {
	rules = append(rules, fakeapi.Rule{Name: "woken", When: fakeapi.Match{PromptContains: "WOKEN"},
		Replies: []fakeapi.Reply{fakeapi.Text("Woke up.")}})
	return fakeapi.Script{Rules: rules, Default: &fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("ok")}}}
}

// A recurring CronCreate job keeps its CLI waiting past its first fire
// (issue 24 §1): the CLI fires it on every match, on the same process,
// until CronDelete; only then may the process go idle and close.
func TestRealCLIRecurringCronKeepsItsCLIWaiting(t *testing.T) {
	// The later turn's rules first: a ToolTurn's second rule matches any
	// request whose history holds its marker.
	rules := fakeapi.ToolTurn("STOPCRON", "CronDelete", map[string]any{"id": "{{cronid}}"}, "Deleted.")
	rules[1].Replies[0].Capture = map[string]string{"cronid": `Scheduled recurring job ([0-9a-f]+)`}
	rules = append(rules, fakeapi.ToolTurn("EVERYMIN", "CronCreate",
		map[string]any{"cron": "* * * * *", "prompt": "WOKEN poll the build", "recurring": true}, "Armed.")...)
	r := newRealSessionWith(t, wakeupScript(rules...), func(c *Config) { c.IdleTimeout = time.Second })
	send(t, r.s, "EVERYMIN please")
	_, i := r.log.waitFor(t, 0, "the answer", answerIs("Armed."))
	pid := r.s.PID()
	p := r.s.Pending()
	require.Len(t, p.Wakeups, 1)
	job := p.Wakeups[0]
	assert.Equal(t, "CronCreate", job.Tool)
	assert.NotEmpty(t, job.ID)
	assert.True(t, job.Recurring)
	assert.Equal(t, "Every minute", job.Schedule)
	assert.False(t, job.At.IsZero())
	require.Eventually(t, func() bool { return r.s.State() == StateWaiting }, 5*time.Second, 20*time.Millisecond)

	for fire := 1; fire <= 2; fire++ {
		i = r.log.waitWithin(t, fireWait, i+1, "a fire of the job", wakeupFired)
		i = r.log.waitWithin(t, waitLimit, i, "the fire's answer", answerIs("Woke up."))
		time.Sleep(1500 * time.Millisecond) // past idle_timeout
		assert.Equal(t, pid, r.s.PID(), "still the same process after fire %d", fire)
		assert.Equal(t, StateWaiting, r.s.State(), "still waiting for the job after fire %d", fire)
		p = r.s.Pending()
		require.Len(t, p.Wakeups, 1, "the job is still pending after fire %d", fire)
		assert.Equal(t, job.ID, p.Wakeups[0].ID)
	}

	send(t, r.s, "STOPCRON please")
	r.log.waitFor(t, i+1, "the deletion's answer", answerIs("Deleted."))
	assert.Empty(t, r.s.Pending().Wakeups)
	require.Eventually(t, func() bool { return r.s.State() == StateExited }, 10*time.Second, 50*time.Millisecond,
		"with no job left the CLI is idle again, and closes")
}

// What a close loses, checked with the real CLI: the process exits at
// once on EOF with its wake-ups pending (ProcessExited.Pending names them);
// a --resume of the session brings its CronCreate jobs back, with their
// ids, but not its ScheduleWakeup; a CronList teaches the session the jobs
// it got back.
func TestRealCLIResumeBringsBackCronJobsButNotTheLoopWakeup(t *testing.T) {
	// Later turns first: a ToolTurn's second rule matches any request
	// whose history holds its marker.
	var rules []fakeapi.Rule
	rules = append(rules, fakeapi.ToolTurn("LISTJOBS", "CronList", map[string]any{}, "Listed.")...)
	rules = append(rules, fakeapi.ToolTurn("LATER", "ScheduleWakeup",
		map[string]any{"delaySeconds": 1800, "reason": "check later", "prompt": "WOKEN later"}, "Armed the wake-up.")...)
	rules = append(rules, fakeapi.ToolTurn("YEARLY", "CronCreate",
		map[string]any{"cron": "0 0 1 1 *", "prompt": "WOKEN new year", "recurring": true}, "Armed the job.")...)
	r := newRealSessionWith(t, wakeupScript(rules...), nil)
	send(t, r.s, "YEARLY please")
	_, i := r.log.waitFor(t, 0, "the job's answer", answerIs("Armed the job."))
	send(t, r.s, "LATER please")
	_, i = r.log.waitFor(t, i+1, "the wake-up's answer", answerIs("Armed the wake-up."))
	before := r.s.Pending()
	require.Len(t, before.Wakeups, 2)
	assert.Equal(t, StateWaiting, r.s.State())

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	start := time.Now()
	require.NoError(t, r.s.CloseProcess(ctx))
	ev, i := r.log.waitFor(t, i+1, "the exit", is[ProcessExited])
	assert.Less(t, time.Since(start), 5*time.Second, "the CLI does not wait for its wake-ups on EOF")
	assert.Equal(t, before.Wakeups, ev.(ProcessExited).Pending.Wakeups, "the exit names what it lost")
	assert.Empty(t, r.s.Pending().Wakeups, "a process that is gone waits for nothing")

	send(t, r.s, "LISTJOBS please")
	r.log.waitFor(t, i+1, "the listing's answer", answerIs("Listed."))
	after := r.s.Pending()
	require.Len(t, after.Wakeups, 1, "only the job came back: %+v", after.Wakeups)
	var job Wakeup
	for _, w := range before.Wakeups {
		if w.Tool == "CronCreate" {
			job = w
		}
	}
	assert.Equal(t, job.ID, after.Wakeups[0].ID, "with its id")
	assert.Equal(t, "WOKEN new year", after.Wakeups[0].Prompt)
	assert.True(t, after.Wakeups[0].Recurring)
	assert.Equal(t, StateWaiting, r.s.State())
}

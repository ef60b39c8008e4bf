package runner

import (
	"encoding/json"
	"slices"
	"time"
)

// Work the CLI does between turns: a Bash command run in the background
// (run_in_background) or a subagent sent there, and the wake-ups Claude
// set with ScheduleWakeup or CronCreate. When the work ends (or a wake-up
// fires) the CLI starts a turn by itself. A process with such work is not
// idle: closing it for idle_timeout, or evicting it for another chat,
// would kill the job or lose the wake-up with nobody told. While it has
// some, its state is StateWaiting.
//
// What CLI 2.1.328 does with wake-ups (checked with the real CLI, see
// realcli_wakeup_test.go and the module wakeups):
//   - they fire only while the process runs; on EOF the CLI exits at once,
//     pending wake-ups or not;
//   - a ScheduleWakeup is gone with the process: a --resume of the session
//     does not bring it back (the CLI re-arms it only under a job
//     directory, which untether does not use);
//   - a CronCreate job (not durable) is "session-only", but a --resume
//     restores the session's jobs, with their ids, and a one-shot whose
//     time has not passed still fires;
//   - a recurring CronCreate job fires on every match until CronDelete or
//     its expiry (cronMaxAge); a one-shot one fires once and is deleted;
//   - only one ScheduleWakeup is pending at a time: a new one supersedes
//     it, and stop:true cancels it.

// wakeGrace is how long after its time a one-shot wake-up is still
// awaited: the CLI fires it on its own timer (a cron job a little early or
// late, with jitter), and the turn it starts takes a moment.
const wakeGrace = 2 * time.Minute

// cronMaxAge is how long the CLI keeps a recurring CronCreate job: its
// result says "Auto-expires after 7 days".
const cronMaxAge = 7 * 24 * time.Hour

// Wakeup is one wake-up Claude set that the CLI will fire by itself.
type Wakeup struct {
	Tool      string    // ScheduleWakeup | CronCreate
	ID        string    // CronCreate's job id; "" for ScheduleWakeup
	At        time.Time // its next fire, as the CLI said; zero when unknown (a recurring job that fired)
	Cron      string    // CronCreate: the 5-field expression, in the CLI's local time
	Schedule  string    // CronCreate: the CLI's own wording ("Every 5 minutes")
	Recurring bool      // CronCreate: fires on every match, not once
	Durable   bool      // CronCreate durable: kept on disk by the CLI, not lost with the process
	Reason    string    // ScheduleWakeup: the one sentence Claude gave the user
	Prompt    string    // what the wake-up sends Claude
	Set       time.Time // when Claude set it
}

// Background is what a process still waited for between turns: its live
// background tasks and its pending wake-ups, soonest first.
type Background struct {
	Tasks   int
	Wakeups []Wakeup
}

// Empty reports whether nothing was pending.
func (b Background) Empty() bool { return b.Tasks == 0 && len(b.Wakeups) == 0 }

// CronJob is a CronCreate job as a CronCreate or CronList result shows it.
type CronJob struct {
	ID        string
	Cron      string
	Schedule  string
	Prompt    string
	Recurring bool
	Durable   bool
	NextFire  time.Time
}

type backgroundWork struct {
	tasks int // background tasks live now (background_tasks_changed)
	wakes []Wakeup
	calls map[ToolUseID]ToolStarted // schedule calls whose result has not come yet
	timer *time.Timer
}

func (b *backgroundWork) reset() {
	if b.timer != nil {
		b.timer.Stop()
	}
	*b = backgroundWork{}
}

// AwaitedUntil is how long w keeps its process waiting: a one-shot
// wake-up a little past its time, a recurring job until it expires.
func (w Wakeup) AwaitedUntil() time.Time {
	if w.Recurring {
		return w.Set.Add(cronMaxAge)
	}
	return w.At.Add(wakeGrace)
}

// prune forgets the wake-ups no longer awaited.
func (b *backgroundWork) prune(now time.Time) {
	b.wakes = slices.DeleteFunc(b.wakes, func(w Wakeup) bool { return !now.Before(w.AwaitedUntil()) })
}

func (b *backgroundWork) pending(now time.Time) bool {
	if b.tasks > 0 {
		return true
	}
	for _, w := range b.wakes {
		if now.Before(w.AwaitedUntil()) {
			return true
		}
	}
	return false
}

// snapshot is what is pending at now.
func (b *backgroundWork) snapshot(now time.Time) Background {
	b.prune(now)
	out := Background{Tasks: b.tasks, Wakeups: slices.Clone(b.wakes)}
	slices.SortStableFunc(out.Wakeups, func(x, y Wakeup) int {
		switch {
		case x.At.IsZero() != y.At.IsZero():
			if x.At.IsZero() {
				return 1
			}
			return -1
		}
		return x.At.Compare(y.At)
	})
	return out
}

// observeBackground follows the events that start and end background work.
func (s *Session) observeBackground(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	b := &s.bg
	switch e := ev.(type) {
	case BackgroundTasks:
		b.tasks = len(e.Tasks)
	case ToolStarted:
		if isScheduleTool(e.Name) || e.Name == "CronDelete" || e.Name == "CronList" {
			if b.calls == nil {
				b.calls = map[ToolUseID]ToolStarted{}
			}
			b.calls[e.ID] = e
		}
		return
	case ToolFinished:
		call, ok := b.calls[e.ID]
		delete(b.calls, e.ID)
		if !ok || !e.OK {
			return
		}
		b.finishScheduleCall(call, e, now)
	case TurnStarted:
		b.fired(e, now)
	default:
		return
	}
	b.prune(now)
	s.armWakeTimerLocked(now)
	s.recomputeStateLocked()
}

// finishScheduleCall applies what a ScheduleWakeup, CronCreate, CronDelete
// or CronList call did, from its input and its result.
func (b *backgroundWork) finishScheduleCall(call ToolStarted, e ToolFinished, now time.Time) {
	sc := call.Schedule
	switch call.Name {
	case "ScheduleWakeup":
		if sc == nil {
			return
		}
		// One loop wake-up at a time: a new one supersedes it, stop ends it.
		b.wakes = slices.DeleteFunc(b.wakes, func(w Wakeup) bool { return w.Tool == "ScheduleWakeup" })
		if !sc.Stop && e.FiresAt.After(now) {
			b.wakes = append(b.wakes, Wakeup{Tool: "ScheduleWakeup", At: e.FiresAt, Reason: sc.Reason, Prompt: sc.Prompt, Set: now})
		}
	case "CronCreate":
		if sc == nil || len(e.CronJobs) != 1 || e.CronJobs[0].ID == "" {
			return
		}
		j := e.CronJobs[0]
		b.dropJob(j.ID)
		b.wakes = append(b.wakes, Wakeup{Tool: "CronCreate", ID: j.ID, At: j.NextFire, Cron: sc.Cron, Schedule: j.Schedule,
			Recurring: j.Recurring, Durable: j.Durable, Prompt: sc.Prompt, Set: now})
	case "CronDelete":
		var in struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(call.Input, &in) == nil && in.ID != "" {
			b.dropJob(in.ID)
		}
	case "CronList":
		b.listed(e.CronJobs, now)
	}
}

// listed takes a CronList result as the truth about the session's jobs:
// after a --resume the CLI restores them with no event, so a listing is how
// they are learnt. The loop wake-up shows there as a one-shot job too; it
// is already followed as the ScheduleWakeup it is.
func (b *backgroundWork) listed(jobs []CronJob, now time.Time) {
	known := map[string]Wakeup{}
	var kept []Wakeup // the loop wake-up, if one is pending
	for _, w := range b.wakes {
		if w.Tool == "CronCreate" {
			known[w.ID] = w
		} else {
			kept = append(kept, w)
		}
	}
	isLoop := func(j CronJob) bool {
		return len(kept) > 0 && !j.Recurring && j.Prompt == kept[0].Prompt && j.NextFire.Equal(kept[0].At)
	}
	for _, j := range jobs {
		if j.ID == "" || isLoop(j) {
			continue
		}
		w := Wakeup{Tool: "CronCreate", ID: j.ID, At: j.NextFire, Cron: j.Cron, Schedule: j.Schedule,
			Recurring: j.Recurring, Durable: j.Durable, Prompt: j.Prompt, Set: now}
		if old, ok := known[j.ID]; ok {
			w.Set = old.Set // its expiry runs from when it was made
		}
		kept = append(kept, w)
	}
	b.wakes = kept
}

func (b *backgroundWork) dropJob(id string) {
	b.wakes = slices.DeleteFunc(b.wakes, func(w Wakeup) bool { return w.Tool == "CronCreate" && w.ID == id })
}

// fired notes a turn a wake-up started. A loop wake-up names the time it
// was set for; a cron fire names no job, so the one-shot job due soonest
// is taken as the one that fired, and a recurring one's next time is no
// longer known.
func (b *backgroundWork) fired(e TurnStarted, now time.Time) {
	switch e.Wakeup {
	case WakeupLoop:
		b.wakes = slices.DeleteFunc(b.wakes, func(w Wakeup) bool {
			return w.Tool == "ScheduleWakeup" && (e.ScheduledFor.IsZero() || w.At.Equal(e.ScheduledFor))
		})
	case WakeupScheduled:
		due := -1
		for i, w := range b.wakes {
			if w.Tool != "CronCreate" || w.At.IsZero() || w.At.After(now.Add(wakeGrace)) {
				continue
			}
			if due < 0 || w.At.Before(b.wakes[due].At) {
				due = i
			}
		}
		if due < 0 {
			return
		}
		if b.wakes[due].Recurring {
			b.wakes[due].At = time.Time{}
		} else {
			b.wakes = slices.Delete(b.wakes, due, due+1)
		}
	}
}

// armWakeTimerLocked re-checks the state when the first wake-up stops
// being awaited, so a process whose wake-up never came may go idle again.
func (s *Session) armWakeTimerLocked(now time.Time) {
	if s.bg.timer != nil {
		s.bg.timer.Stop()
		s.bg.timer = nil
	}
	var first time.Time
	for _, w := range s.bg.wakes {
		if u := w.AwaitedUntil(); first.IsZero() || u.Before(first) {
			first = u
		}
	}
	if first.IsZero() {
		return
	}
	s.bg.timer = time.AfterFunc(first.Sub(now), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := time.Now()
		s.bg.prune(now)
		s.armWakeTimerLocked(now)
		s.recomputeStateLocked()
	})
}

// Background reports what the process still waits for between turns: its
// live background tasks and the soonest pending wake-up's time (zero if
// none is known).
func (s *Session) Background() (tasks int, wakeAt time.Time) {
	p := s.Pending()
	for _, w := range p.Wakeups {
		if !w.At.IsZero() {
			return p.Tasks, w.At
		}
	}
	return p.Tasks, time.Time{}
}

// Pending is what the process still waits for between turns.
func (s *Session) Pending() Background {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bg.snapshot(time.Now())
}

// takeBackgroundLocked is what the exiting process waited for; its work
// ends with it.
func (s *Session) takeBackgroundLocked() Background {
	p := s.bg.snapshot(time.Now())
	s.bg.reset()
	return p
}

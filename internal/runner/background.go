package runner

import "time"

// Work the CLI does between turns: a Bash command run in the background
// (run_in_background) or a subagent sent there, and a ScheduleWakeup or
// CronCreate wake-up. When the work ends (or the wake-up fires) the CLI
// starts a turn by itself. A process with such work is not idle: closing
// it for idle_timeout, or evicting it for another chat, would kill the job
// or lose the wake-up with nobody told. While it has some, its state is
// StateWaiting.

// wakeGrace is how long after its time a wake-up is still awaited: the CLI
// fires it on its own timer, and the turn it starts takes a moment.
const wakeGrace = 2 * time.Minute

type backgroundWork struct {
	tasks int       // background tasks live now (background_tasks_changed)
	wake  time.Time // the latest pending wake-up, plus wakeGrace
	timer *time.Timer
}

func (b *backgroundWork) reset() {
	if b.timer != nil {
		b.timer.Stop()
	}
	*b = backgroundWork{}
}

func (b *backgroundWork) pending(now time.Time) bool {
	return b.tasks > 0 || now.Before(b.wake)
}

// observeBackground follows the events that start and end background work.
func (s *Session) observeBackground(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	switch e := ev.(type) {
	case BackgroundTasks:
		s.bg.tasks = len(e.Tasks)
	case ToolFinished:
		if e.FiresAt.IsZero() || !e.FiresAt.After(now) {
			return
		}
		if until := e.FiresAt.Add(wakeGrace); until.After(s.bg.wake) {
			s.bg.wake = until
			if s.bg.timer != nil {
				s.bg.timer.Stop()
			}
			// When the window ends without the wake-up, the process may
			// go idle again.
			s.bg.timer = time.AfterFunc(until.Sub(now), func() {
				s.mu.Lock()
				s.recomputeStateLocked()
				s.mu.Unlock()
			})
		}
	case TurnStarted:
		if e.Wakeup != "" && !now.Before(s.bg.wake.Add(-wakeGrace)) {
			s.bg.wake = time.Time{} // the awaited wake-up fired
		}
	default:
		return
	}
	s.recomputeStateLocked()
}

// Background reports what the process still waits for between turns: its
// live background tasks and the pending wake-up's time (zero if none).
func (s *Session) Background() (tasks int, wakeAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().Before(s.bg.wake) {
		wakeAt = s.bg.wake.Add(-wakeGrace)
	}
	return s.bg.tasks, wakeAt
}

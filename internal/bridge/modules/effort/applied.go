package effort

import (
	"context"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/runner"
)

// applied is what a chat's live CLI applies, as far as it is known: the
// level its model gets, read from the process (get_settings) when a turn
// starts in a process (or with a model) not read before, or taken from a
// live change's read-back. A turn's footer names the effort only when
// this was known for the turn's process when it started and nothing
// changed it before the answer.
type applied struct {
	proc      procKey
	known     bool
	level     runner.Effort
	supported bool
	asking    bool // a read is on its way
	// changes is how many live changes are on their way: a turn that
	// starts or runs meanwhile may run with either level.
	changes int
	gen     int // counts live changes: a read begun before one is stale

	turn turnEffort
}

// procKey is one CLI process of a session, with the model its turns
// report: a reading holds for it alone.
type procKey struct {
	sess  *runner.Session
	pid   int
	model string
}

// turnEffort is the running turn's effort.
type turnEffort struct {
	proc      procKey
	known     bool
	level     runner.Effort
	supported bool
	// mixed: the effort changed during the turn, so no one level is what
	// it ran with.
	mixed bool
}

// of reports whether the reading is of sess's live process.
func (a *applied) of(sess *runner.Session) bool {
	return a.known && sess != nil && a.proc.sess == sess && a.proc.pid == sess.PID()
}

// turnStarted notes the turn's process and takes its level when known,
// else reads it (off the actor).
func (m *Module) turnStarted(c *chat.Chat, ts runner.TurnStarted) {
	sess := c.Session()
	st := m.state.Get(c)
	if sess == nil {
		st.turn = turnEffort{}
		return
	}
	key := procKey{sess: sess, pid: sess.PID(), model: ts.Model}
	st.turn = turnEffort{proc: key, mixed: st.changes > 0}
	if st.known && st.proc == key {
		st.turn.known, st.turn.level, st.turn.supported = true, st.level, st.supported
		return
	}
	if st.asking {
		return
	}
	st.asking = true
	gen := st.gen
	c.Offload(func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, runner.DefaultControlTimeout)
		defer cancel()
		level, supported, err := sess.AppliedEffort(ctx)
		return func() {
			st := m.state.Get(c)
			st.asking = false
			if err != nil {
				c.Log().Info().Err(err).Msg("read the effort the CLI applies")
				return
			}
			if st.gen != gen {
				return // a live change came meanwhile; its read-back is what holds
			}
			st.proc, st.known, st.level, st.supported = key, true, level, supported
			if st.turn.proc == key && !st.turn.mixed && !st.turn.known {
				st.turn.known, st.turn.level, st.turn.supported = true, level, supported
			}
		}
	})
}

// changing notes a live change on its way: what the process applies is
// not known until it is back, and a running turn runs with two levels.
func (m *Module) changing(c *chat.Chat) {
	st := m.state.Get(c)
	st.changes++
	st.gen++
	st.known = false
	if c.TurnRunning() {
		st.turn.mixed = true
	}
}

// changed takes a live change's read-back as the process's level (err:
// it failed, and nothing is known; not Live: there was no process).
func (m *Module) changed(c *chat.Chat, sess *runner.Session, ch runner.EffortChange, err error) {
	st := m.state.Get(c)
	st.changes--
	if c.TurnRunning() {
		st.turn.mixed = true
	}
	if err != nil || !ch.Live {
		st.known = false
		return
	}
	model := st.proc.model
	if st.turn.proc.sess == sess {
		model = st.turn.proc.model
	}
	st.proc, st.known, st.level, st.supported = procKey{sess: sess, pid: sess.PID(), model: model}, true, ch.Applied, ch.Supported
}

// turnEffort is the footer's effort for the answer being sent, "" when
// what the turn ran with is not known or was no level; it ends the turn.
func (m *Module) turnEffort(c *chat.Chat) string {
	st := m.state.Get(c)
	t := st.turn
	st.turn = turnEffort{}
	if !t.known || t.mixed || !t.supported {
		return ""
	}
	return string(t.level)
}

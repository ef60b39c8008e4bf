package triggers

import (
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// waitingPoll is how often a run waiting for a busy chat looks again (a
// turn's end also lets it go).
const waitingPoll = 2 * time.Second

// note is the line a run's progress and answer carry.
func note(name string) string { return "⚡ trigger " + name }

// run sends a run's prompt once the chat is free: a run never folds into
// a turn someone started, and never overtakes a run that came before it
// and still waits.
func (m *Module) run(c *chat.Chat, r state.TriggerRun) {
	w := m.wait.Get(c)
	w.waiting = append(w.waiting, r)
	m.runWaiting(c)
}

// runWaiting runs the runs that came while the chat was busy, oldest
// first, for as long as the chat is free. An album or forwards being
// collected go first.
func (m *Module) runWaiting(c *chat.Chat) {
	w := m.wait.Get(c)
	for len(w.waiting) > 0 {
		c.FlushPending()
		if c.Busy() {
			m.pollWaiting(c)
			return
		}
		r := w.waiting[0]
		w.waiting = w.waiting[1:]
		m.start(c, r)
	}
}

// start sends r's prompt; the chat is free.
func (m *Module) start(c *chat.Chat, r state.TriggerRun) {
	if !m.host.ChatServed(c.Key()) {
		c.Log().Warn().Str("trigger", r.Trigger).Int64("run", r.ID).Msg("not running a webhook prompt: the chat is no longer allowed")
		m.finish(c, r)
		return
	}
	if !m.enterProject(c, r) { // told why not
		m.finish(c, r)
		return
	}
	c.Log().Info().Str("trigger", r.Trigger).Int64("run", r.ID).Msg("running a webhook prompt")
	c.SendOutgoing(chat.NewOutgoing(runner.UserInput{Text: r.Prompt}, 0, 0).WithNote(note(r.Trigger)).
		OnSettled(func() { m.finish(c, r) }))
}

func (m *Module) pollWaiting(c *chat.Chat) {
	w := m.wait.Get(c)
	if w.polling {
		return
	}
	w.polling = true
	time.AfterFunc(waitingPoll, func() {
		c.Post(func() {
			m.wait.Get(c).polling = false
			m.runWaiting(c)
		})
	})
}

// finish forgets a run: its prompt reached the CLI, or the chat was told
// why it did not run. A disk that refuses it keeps the write and does it
// again (durable); a stop before that would run it once more.
func (m *Module) finish(c *chat.Chat, r state.TriggerRun) {
	if err := m.store.FinishTriggerRun(c.Ctx(), r.ID); err != nil {
		c.Log().Error().Err(err).Int64("run", r.ID).Msg("forget a webhook run")
	}
	m.mu.Lock()
	delete(m.handed, r.ID)
	m.mu.Unlock()
}

// enterProject moves the chat to the run's project, if its trigger names
// one, and reports whether the run may go on there (chat.EnterProject).
// The chat is free: run waited for that.
func (m *Module) enterProject(c *chat.Chat, r state.TriggerRun) bool {
	return r.Project == "" || c.EnterProject(r.Project, "⚡", "Trigger "+r.Trigger)
}

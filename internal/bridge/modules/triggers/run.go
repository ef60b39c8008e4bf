package triggers

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// note is the line a run's progress and answer carry.
func note(name string) string { return "⚡ trigger " + name }

// start sends r's prompt, the chat being free: runs wait for it, oldest
// first, in the chat's queue (m.queue, chat.WaitQueue), so one never folds
// into a turn someone started nor overtakes a run that came before it.
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
// The chat is free: the queue waited for that.
func (m *Module) enterProject(c *chat.Chat, r state.TriggerRun) bool {
	return r.Project == "" || c.EnterProject(r.Project, "⚡", "Trigger "+r.Trigger)
}

package schedules

import (
	"strconv"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
)

// A [[schedules]] entry may name a project: each run works there. When
// the run fires and the chat is free, a chat (or topic) working elsewhere
// is switched to the project the way /project NAME does, keeping the
// session it had there, and is told; it stays there afterwards. A chat
// already in the project, on any branch, is left where it is. The run is
// then a message like any other: the project's budget, mode and
// approvals apply. /at and /every have no project: they run wherever the
// chat works when they fire.

// scheduleProject is the project a schedule's runs work in; "" for none.
func (m *Module) scheduleProject(sc state.Schedule) string {
	if sc.Source != state.ScheduleFromConfig {
		return ""
	}
	if projects := m.schedProjects.Load(); projects != nil {
		return (*projects)[sc.ConfigKey]
	}
	return ""
}

// enterScheduledProject moves the chat to the schedule's project, if it
// has one, and reports whether the run may go on there
// (chat.EnterProject). The chat is free (the queue waited for that).
func (m *Module) enterScheduledProject(c *chat.Chat, sc state.Schedule) bool {
	name := m.scheduleProject(sc)
	return name == "" || c.EnterProject(name, "⏰", "Scheduled #"+strconv.FormatInt(sc.ID, 10))
}

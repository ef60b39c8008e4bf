package schedules

import (
	"strconv"
	"strings"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
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
// has one, and reports whether the run may go on there. The chat is free
// (runScheduled waited for that).
func (m *Module) enterScheduledProject(c *chat.Chat, sc state.Schedule) bool {
	name := m.scheduleProject(sc)
	if name == "" {
		return true
	}
	cfg := c.Config()
	id := "#" + strconv.FormatInt(sc.ID, 10)
	p, ok := cfg.Project(name)
	if !ok {
		c.Log().Warn().Int64("schedule", sc.ID).Str("project", name).Msg("a scheduled prompt's project is gone")
		c.Reply("⚠️ Scheduled "+id+" did not run: its project <b>"+render.EscapeHTML(name)+
			"</b> is no longer in untether's configuration.", 0)
		return false
	}
	if !c.MayUse(p) {
		c.Log().Warn().Int64("schedule", sc.ID).Str("project", name).Msg("a scheduled prompt's project is not open to its chat")
		c.Reply("⚠️ Scheduled "+id+" did not run: its project "+c.NotOpen(p)+".", 0)
		return false
	}
	if _, cur := c.Place(cfg); strings.EqualFold(cur.Project, p.Name) {
		return true
	}
	if err := chat.CheckProjectDir(p); err != nil {
		c.Reply("⚠️ Scheduled "+id+" did not run: the directory of project <b>"+render.EscapeHTML(p.Name)+
			"</b> cannot be used: "+render.EscapeHTML(err.Error()), 0)
		return false
	}
	to := chat.Place{Project: p.Name}
	if !c.SwitchPlace(to, func(string) {}) {
		return false // busy: cannot happen, runScheduled waited
	}
	c.Log().Info().Int64("schedule", sc.ID).Str("project", p.Name).Msg("switched to a scheduled prompt's project")
	c.Reply("⏰ Scheduled "+id+" runs in project <b>"+render.EscapeHTML(p.Name)+"</b>, so this "+c.ChatWord()+
		" works there now: <code>"+render.EscapeHTML(chat.WhereText(p, to))+"</code>. /project switches back.", 0)
	return true
}

package chat

import (
	"strings"

	"github.com/untether/untether/internal/render"
)

// EnterProject moves the chat, which must be free, to project name for
// work nobody typed just now (a scheduled run, a webhook's prompt), the
// way /project NAME does, keeping the session the chat had there, and
// says so; icon and what name the work in what the chat is told ("⏰",
// "Scheduled #3"). A chat already in the project, on any branch, stays
// where it is; one moved stays there afterwards. It reports whether the
// work may go on there: when the project is gone from the configuration,
// closed to the chat, or its directory unusable, the chat was told why
// and it may not.
func (c *Chat) EnterProject(name, icon, what string) bool {
	cfg := c.Config()
	log := c.Log().With().Str("work", what).Str("project", name).Logger()
	didNot := "⚠️ " + render.EscapeHTML(what) + " did not run: "
	p, ok := cfg.Project(name)
	if !ok {
		log.Warn().Msg("the project of work nobody typed is gone")
		c.Reply(didNot+"its project <b>"+render.EscapeHTML(name)+"</b> is no longer in untether's configuration.", 0)
		return false
	}
	if !c.MayUse(p) { // projects_allowed.go
		log.Warn().Msg("the project of work nobody typed is not open to its chat")
		c.Reply(didNot+"its project "+c.NotOpen(p)+".", 0)
		return false
	}
	if _, cur := c.Place(cfg); strings.EqualFold(cur.Project, p.Name) {
		return true
	}
	if err := CheckProjectDir(p); err != nil {
		c.Reply(didNot+"the directory of project <b>"+render.EscapeHTML(p.Name)+"</b> cannot be used: "+render.EscapeHTML(err.Error()), 0)
		return false
	}
	to := Place{Project: p.Name}
	if !c.SwitchPlace(to, func(string) {}) {
		return false // busy: the caller waited for a free chat
	}
	log.Info().Msg("switched to the project of work nobody typed")
	c.Reply(icon+" "+render.EscapeHTML(what)+" runs in project <b>"+render.EscapeHTML(p.Name)+"</b>, so this "+c.ChatWord()+
		" works there now: <code>"+render.EscapeHTML(WhereText(p, to))+"</code>. /project switches back.", 0)
	return true
}

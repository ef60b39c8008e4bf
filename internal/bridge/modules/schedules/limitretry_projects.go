package schedules

import (
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
)

// A retry after a limit goes back to the project and branch its prompt
// was rejected in (the session the turn ran in), not to wherever the chat
// works hours later. When it fires in a chat that works elsewhere, the
// chat is switched back the way a scheduled run's project does it
// (projects.go), and told; a chat busy elsewhere is waited for.
// A project the config no longer has drops the retry, and says so.
// Retries kept before this was recorded (no project) go wherever the chat
// works.

// busyElsewherePoll is how often a retry waiting for a chat busy elsewhere
// looks again.
const busyElsewherePoll = 2 * time.Second

// enterRetryPlace moves the chat to where the retry's prompt ran, and
// reports whether the prompt may go now. When the chat is busy elsewhere
// it tries again later; when the place is gone the retry is dropped.
func (m *Module) enterRetryPlace(c *chat.Chat, r state.Retry) bool {
	if r.Project == "" {
		return true
	}
	cfg := c.Config()
	label := "“" + render.EscapeHTML(render.Truncate(strings.Join(strings.Fields(r.Label), " "), 60)) + "”"
	p, ok := cfg.Project(r.Project)
	if !ok {
		m.dropRetry(c, r, "⚠️ "+label+" was not sent again after the limit: its project <b>"+render.EscapeHTML(r.Project)+
			"</b> is no longer in untether's configuration. Send it yourself where you like.")
		return false
	}
	if !c.MayUse(p) {
		m.dropRetry(c, r, "⚠️ "+label+" was not sent again after the limit: its project "+c.NotOpen(p)+" now.")
		return false
	}
	to := chat.Place{Project: p.Name, Branch: r.Branch}
	if _, cur := c.Place(cfg); strings.EqualFold(cur.Project, to.Project) && cur.Branch == to.Branch {
		return true
	}
	if c.Busy() { // the chat's own turn elsewhere is not cut off: try again once it ends
		time.AfterFunc(busyElsewherePoll, func() { c.Post(func() { m.fireRetry(c, r) }) })
		return false
	}
	if err := chat.CheckProjectDir(p); err != nil {
		m.dropRetry(c, r, "⚠️ "+label+" was not sent again after the limit: the directory of project <b>"+render.EscapeHTML(p.Name)+
			"</b> cannot be used: "+render.EscapeHTML(err.Error()))
		return false
	}
	if !c.SwitchPlace(to, func(string) {}) {
		return false // busy: checked above
	}
	c.Log().Info().Str("project", to.String()).Msg("switched back to where a retried prompt ran")
	c.Reply("⏰ "+label+" goes again in <b>"+render.EscapeHTML(to.String())+"</b>, where the limit stopped it, so this "+c.ChatWord()+
		" works there now: <code>"+render.EscapeHTML(chat.WhereText(p, to))+"</code>. /project switches back.", int(r.ReplyTo))
	return true
}

// dropRetry gives up a claimed retry that cannot go where it belongs.
func (m *Module) dropRetry(c *chat.Chat, r state.Retry, why string) {
	c.Log().Warn().Str("project", r.Project).Msg("dropping a retry after a limit: its project cannot be used")
	if _, err := m.store.DecideRetry(c.Ctx(), r.Token, state.RetryDropped, 0, state.RetryFiring, state.RetrySent, state.RetryScheduled); err != nil {
		c.Log().Error().Err(err).Msg("drop a retry after a limit")
	}
	m.editLimitNotice(c, r, render.LimitRetry{State: render.LimitRetryDropped})
	delete(m.away.Get(c).notices, r.Token)
	c.Reply(why, int(r.ReplyTo))
}

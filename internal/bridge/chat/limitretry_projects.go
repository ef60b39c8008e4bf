package chat

import (
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
)

// A retry after a limit goes back to the project and branch its prompt
// was rejected in (the session the turn ran in), not to wherever the chat
// works hours later. When it fires in a chat that works elsewhere, the
// chat is switched back the way a scheduled run's project does it
// (schedules_projects.go), and told; a chat busy elsewhere is waited for.
// A project the config no longer has drops the retry, and says so.
// Retries kept before this was recorded (no project) go wherever the chat
// works.

// enterRetryPlace moves the chat to where the retry's prompt ran, and
// reports whether the prompt may go now. When the chat is busy elsewhere
// it tries again later; when the place is gone the retry is dropped.
func (c *Chat) enterRetryPlace(r state.Retry) bool {
	if r.Project == "" {
		return true
	}
	cfg := c.b.Config()
	label := "“" + render.EscapeHTML(render.Truncate(strings.Join(strings.Fields(r.Label), " "), 60)) + "”"
	p, ok := cfg.Project(r.Project)
	if !ok {
		c.dropRetry(r, "⚠️ "+label+" was not sent again after the limit: its project <b>"+render.EscapeHTML(r.Project)+
			"</b> is no longer in untether's configuration. Send it yourself where you like.")
		return false
	}
	if !c.mayUse(p) { // projects_allowed.go
		c.dropRetry(r, "⚠️ "+label+" was not sent again after the limit: its project "+c.notOpen(p)+" now.")
		return false
	}
	to := Place{Project: p.Name, Branch: r.Branch}
	if _, cur := c.placeFor(cfg); strings.EqualFold(cur.Project, to.Project) && cur.Branch == to.Branch {
		return true
	}
	if c.busy() { // the chat's own turn elsewhere is not cut off: try again once it ends
		time.AfterFunc(waitingPoll, func() { c.post(item{fn: func() { c.fireRetry(r) }}) })
		return false
	}
	if err := checkProjectDir(p); err != nil {
		c.dropRetry(r, "⚠️ "+label+" was not sent again after the limit: the directory of project <b>"+render.EscapeHTML(p.Name)+
			"</b> cannot be used: "+render.EscapeHTML(err.Error()))
		return false
	}
	if !c.switchPlace(to, func(string) {}) {
		return false // busy: checked above
	}
	c.log.Info().Str("project", to.String()).Msg("switched back to where a retried prompt ran")
	c.reply("⏰ "+label+" goes again in <b>"+render.EscapeHTML(to.String())+"</b>, where the limit stopped it, so this "+c.chatWord()+
		" works there now: <code>"+render.EscapeHTML(whereText(p, to))+"</code>. /project switches back.", int(r.ReplyTo))
	return true
}

// dropRetry gives up a claimed retry that cannot go where it belongs.
func (c *Chat) dropRetry(r state.Retry, why string) {
	c.log.Warn().Str("project", r.Project).Msg("dropping a retry after a limit: its project cannot be used")
	if _, err := c.b.store.DecideRetry(c.ctx(), r.Token, state.RetryDropped, 0, state.RetryFiring, state.RetrySent, state.RetryScheduled); err != nil {
		c.log.Error().Err(err).Msg("drop a retry after a limit")
	}
	c.editLimitNotice(r, render.LimitRetry{State: render.LimitRetryDropped})
	c.reply(why, int(r.ReplyTo))
}

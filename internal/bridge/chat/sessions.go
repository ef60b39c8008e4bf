package chat

import (
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// /sessions lists the chat's last sessions with a Resume button each;
// /continue takes the latest conversation in the project's directory when
// it is the chat's own or, in a private chat, one started outside
// untether (the hand-off from a terminal; the places module); and each answer can
// end with the command that resumes the session at a terminal ([render]
// show_resume_line; the places module's handoff.go).

// sessionsShown is how many sessions /sessions lists.
const sessionsShown = 10

// SessionPromptMax is how much of a first prompt a /sessions line shows.
const SessionPromptMax = 60

// SessionLine is one /sessions entry: where, what, when, how much.
func SessionLine(se state.Session, now time.Time) string {
	where := Place{Project: se.Project, Branch: se.Branch}.String()
	prompt := strings.Join(strings.Fields(se.FirstPrompt), " ")
	if prompt == "" {
		prompt = "(started elsewhere or without text)"
	} else {
		prompt = "“" + render.Truncate(prompt, SessionPromptMax) + "”"
	}
	line := render.Bold(where) + " — " + render.EscapeHTML(prompt) +
		" · " + render.FormatElapsed(now.Sub(se.LastActive)) + " ago · " + plural(se.Turns, "turn", "turns")
	if se.CostUSD > 0 {
		line += " · " + render.FormatCost(se.CostUSD)
	}
	return line
}

// resumeSession makes the chat resume session id (a Resume button's, an
// interrupted approval's), in the project and branch it ran in, and reports
// whether it does (respond says why not). An id that is not a session id
// (runner.ParseSessionID) changes nothing.
func (c *Chat) resumeSession(stored string, respond func(string)) bool {
	id, err := runner.ParseSessionID(stored)
	if err != nil {
		c.logger().Error().Err(err).Msg("resume a session whose stored id is not a session id")
		respond("⚠️ That session cannot be resumed: its stored id is not a valid session id.")
		return false
	}
	se, err := c.b.store.GetSession(c.ctx(), string(id))
	if err != nil {
		respond("⚠️ That session is not known any more.")
		return false
	}
	cfg := c.b.Config()
	p, ok := cfg.Project(se.Project)
	if !ok {
		respond("⚠️ That session ran in project " + render.Bold(se.Project) + ", which is no longer configured.")
		return false
	}
	if !c.mayUse(p) { // projects_allowed.go
		respond(c.notOpenText(p))
		return false
	}
	to := Place{Project: p.Name, Branch: se.Branch}
	if err := CheckProjectDir(p); err != nil {
		respond("⚠️ The directory of project " + render.Bold(p.Name) + " cannot be used: " + render.EscapeHTML(err.Error()))
		return false
	}
	if !c.switchPlace(to, respond) {
		return false
	}
	if err := c.b.store.NoteSession(c.ctx(), c.key, to.Project, to.Branch, string(id)); err != nil {
		c.logger().Error().Err(err).Msg("resume a session")
		respond("⚠️ Could not resume that session.")
		return false
	}
	_ = c.b.store.TouchSession(c.ctx(), string(id))
	c.rec.SessionID = string(id)
	c.saveRecord()
	respond("↩️ Resuming " + SessionLine(se, time.Now()) + "\n" + c.arrivedText(p, to))
	return true
}

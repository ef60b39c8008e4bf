package chat

import (
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// /sessions lists the chat's last sessions with a Resume button each;
// /continue takes the latest conversation in the project's directory when
// it is the chat's own or, in a private chat, one started outside
// untether (the hand-off from a terminal; continue_latest.go); and each answer can
// end with "claude --resume <id>" ([render] show_resume_line), the hand-off
// to a terminal.

// sessionsShown is how many sessions /sessions lists.
const sessionsShown = 10

// sessionPromptMax is how much of a first prompt a /sessions line shows.
const sessionPromptMax = 60

func (c *Chat) listSessions(replyTo int) {
	list, err := c.b.store.RecentSessions(c.ctx(), c.key, sessionsShown)
	if err != nil {
		c.log.Error().Err(err).Msg("list sessions")
		c.reply("⚠️ Could not read this "+c.chatWord()+"'s sessions.", replyTo)
		return
	}
	if len(list) == 0 {
		c.reply("No sessions in this "+c.chatWord()+" yet: your next message starts one.", replyTo)
		return
	}
	now := time.Now()
	var b strings.Builder
	b.WriteString("🗂 <b>Sessions</b> (latest first)\n")
	choices, labels := make([]string, len(list)), make([]string, len(list))
	for i, se := range list {
		n := strconv.Itoa(i + 1)
		choices[i], labels[i] = se.ID, "▶️ "+n
		b.WriteString("\n" + n + ". " + sessionLine(se, now))
	}
	b.WriteString("\n\nResume one with its button.")
	c.showMenuLabeled("session", b.String(), choices, labels, c.record().SessionID, replyTo)
}

// sessionLine is one /sessions entry: where, what, when, how much.
func sessionLine(se state.Session, now time.Time) string {
	where := Place{Project: se.Project, Branch: se.Branch}.String()
	prompt := strings.Join(strings.Fields(se.FirstPrompt), " ")
	if prompt == "" {
		prompt = "(started elsewhere or without text)"
	} else {
		prompt = "“" + render.Truncate(prompt, sessionPromptMax) + "”"
	}
	line := "<b>" + render.EscapeHTML(where) + "</b> — " + render.EscapeHTML(prompt) +
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
		c.log.Error().Err(err).Msg("resume a session whose stored id is not a session id")
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
		respond("⚠️ That session ran in project <b>" + render.EscapeHTML(se.Project) + "</b>, which is no longer configured.")
		return false
	}
	if !c.mayUse(p) { // projects_allowed.go
		respond(c.notOpenText(p))
		return false
	}
	to := Place{Project: p.Name, Branch: se.Branch}
	if err := CheckProjectDir(p); err != nil {
		respond("⚠️ The directory of project <b>" + render.EscapeHTML(p.Name) + "</b> cannot be used: " + render.EscapeHTML(err.Error()))
		return false
	}
	if !c.switchPlace(to, respond) {
		return false
	}
	if err := c.b.store.NoteSession(c.ctx(), c.key, to.Project, to.Branch, string(id)); err != nil {
		c.log.Error().Err(err).Msg("resume a session")
		respond("⚠️ Could not resume that session.")
		return false
	}
	_ = c.b.store.TouchSession(c.ctx(), string(id))
	c.rec.SessionID = string(id)
	c.saveRecord()
	respond("↩️ Resuming " + sessionLine(se, time.Now()) + "\n" + c.arrivedText(p, to))
	return true
}

// continueLatest is /continue: the next message continues the most recent
// conversation in the project's directory, including one started at a
// terminal there, when the chat may see it (continue_latest.go).
func (c *Chat) continueLatest(replyTo int) {
	cfg := c.b.Config()
	p, pl := c.placeFor(cfg)
	respond := func(html string) { c.reply(html, replyTo) }
	if c.refuseBusy(respond) {
		return
	}
	if p.Remote() {
		c.continueRemote(p, pl, respond)
		return
	}
	dir := placeDir(p, pl)
	id, err := latestSession(c.b.cliHome(p), dir)
	switch {
	case err != nil:
		c.log.Error().Err(err).Msg("find the latest session")
		respond("⚠️ Could not look for the most recent Claude session in <code>" + render.EscapeHTML(dir) + "</code>: " + render.EscapeHTML(err.Error()))
		return
	case id == "":
		respond("There is no Claude session in <code>" + render.EscapeHTML(dir) + "</code> to continue yet: your next message starts one.")
		return
	}
	if why := c.continueRefusal(id); why != "" {
		c.log.Info().Str("latest", id).Msg("refused /continue: the latest session is not this chat's to see")
		respond(why)
		return
	}
	text, ours := c.continueText(id, dir, pl.String())
	if id != c.record().SessionID {
		c.dropSession("/continue")
		c.continueNext = false
		if err := c.b.store.NoteSession(c.ctx(), c.key, pl.Project, pl.Branch, id); err != nil {
			c.log.Error().Err(err).Msg("continue the latest session")
			respond("⚠️ Could not continue that session.")
			return
		}
		c.rec.SessionID = id
		c.saveRecord()
		if !ours {
			c.adoptID = id // its first prompt was someone else's (noteSession)
		}
	}
	respond(text)
}

// continueRemote is /continue in a project on another host, whose
// transcripts untether cannot read: a group is refused, a private chat
// gets the CLI's own --continue.
func (c *Chat) continueRemote(p config.ProjectSettings, pl Place, respond func(string)) {
	if c.group {
		respond("🔒 Project <b>" + render.EscapeHTML(p.Name) + "</b> runs on " + render.EscapeHTML(p.Host) +
			", where untether cannot see whose the most recent Claude session is, so /continue works for it only in a private chat. /sessions lists this " +
			c.chatWord() + "'s sessions.")
		return
	}
	// Killed, not closed: a CLI that exits normally appends to its
	// transcript, which would make its own session the directory's latest,
	// the one --continue takes.
	c.detachSession("/continue", true)
	c.continueNext = true
	c.rec.SessionID = ""
	c.saveRecord()
	respond("↪️ Your next message continues the most recent Claude session in <code>" + render.EscapeHTML(WhereText(p, pl)) +
		"</code>, wherever it was started (a terminal too), in project <b>" + render.EscapeHTML(pl.String()) + "</b>.")
}

// resumeLine is the answer's "claude --resume <id>", when the config
// shows it.
func (c *Chat) resumeLine(id string) string {
	if id == "" || !c.b.Config().Render.ShowResumeLine {
		return ""
	}
	return "claude --resume " + id
}

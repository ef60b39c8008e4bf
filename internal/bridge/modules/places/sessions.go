package places

import (
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// sessionsShown is how many sessions /sessions lists.
const sessionsShown = 10

func (m *Module) listSessions(c *chat.Chat, replyTo int) {
	list, err := m.store.RecentSessions(c.Ctx(), c.Key(), sessionsShown)
	if err != nil {
		c.Log().Error().Err(err).Msg("list sessions")
		c.Reply("⚠️ Could not read this "+c.ChatWord()+"'s sessions.", replyTo)
		return
	}
	if len(list) == 0 {
		c.Reply("No sessions in this "+c.ChatWord()+" yet: your next message starts one.", replyTo)
		return
	}
	now := time.Now()
	var b strings.Builder
	b.WriteString("🗂 <b>Sessions</b> (latest first)\n")
	choices, labels := make([]string, len(list)), make([]string, len(list))
	for i, se := range list {
		n := strconv.Itoa(i + 1)
		choices[i], labels[i] = se.ID, "▶️ "+n
		b.WriteString("\n" + n + ". " + chat.SessionLine(se, now))
	}
	b.WriteString("\n\nResume one with its button.")
	c.ShowMenuLabeled("session", b.String(), choices, labels, c.Record().SessionID, replyTo)
}

// continueLatest is /continue: the next message continues the most recent
// conversation in the project's directory, including one started at a
// terminal there, when the chat may see it (continue.go).
func (m *Module) continueLatest(c *chat.Chat, replyTo int) {
	cfg := c.Config()
	p, pl := c.Place(cfg)
	respond := func(html string) { c.Reply(html, replyTo) }
	if c.RefuseBusy(respond) {
		return
	}
	if p.Remote() {
		m.continueRemote(c, p, pl, respond)
		return
	}
	dir := chat.PlaceDir(p, pl)
	id, err := latestSession(m.cliHome(p), dir)
	switch {
	case err != nil:
		c.Log().Error().Err(err).Msg("find the latest session")
		respond("⚠️ Could not look for the most recent Claude session in " + render.Code(dir) + ": " + render.EscapeHTML(err.Error()))
		return
	case id == "":
		respond("There is no Claude session in " + render.Code(dir) + " to continue yet: your next message starts one.")
		return
	}
	if why := m.continueRefusal(c, id); why != "" {
		c.Log().Info().Str("latest", id).Msg("refused /continue: the latest session is not this chat's to see")
		respond(why)
		return
	}
	text, ours := m.continueText(c, id, dir, pl.String())
	if err := c.ContinueSession(pl, id, ours); err != nil {
		c.Log().Error().Err(err).Msg("continue the latest session")
		respond("⚠️ Could not continue that session.")
		return
	}
	respond(text)
}

// continueRemote is /continue in a project on another host, whose
// transcripts untether cannot read: a group is refused, a private chat
// gets the CLI's own --continue.
func (m *Module) continueRemote(c *chat.Chat, p config.ProjectSettings, pl chat.Place, respond func(string)) {
	if c.Group() {
		respond("🔒 Project " + render.Bold(p.Name) + " runs on " + render.EscapeHTML(p.Host) +
			", where untether cannot see whose the most recent Claude session is, so /continue works for it only in a private chat. /sessions lists this " +
			c.ChatWord() + "'s sessions.")
		return
	}
	c.ContinueLatestNext()
	respond("↪️ Your next message continues the most recent Claude session in <code>" + render.EscapeHTML(chat.WhereText(p, pl)) +
		"</code>, wherever it was started (a terminal too), in project " + render.Bold(pl.String()) + ".")
}

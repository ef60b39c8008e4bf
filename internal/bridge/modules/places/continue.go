package places

import (
	"errors"
	"os"
	"strings"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/transcript"
)

// /continue takes the most recent conversation in the project's directory,
// but only one the chat may see: a session untether ran is the chat's (or
// topic's) that ran it, and never goes to another chat; one started
// outside untether (a terminal) may go to a private chat, never to a group
// or forum topic, where everyone in it would read it. untether finds that
// conversation itself, in the CLI's transcripts (internal/transcript),
// checks whose it is, and resumes it by id, so the CLI cannot pick another
// one between the check and the start. A project on another host has its transcripts there:
// untether cannot look, so /continue there is refused in groups and left
// to the CLI's own --continue in a private chat.

// cliHome is the HOME the CLI of project p runs with, where its
// transcripts are (transcript.Dir): the project's home, else its env's,
// else the daemon's.
func (m *Module) cliHome(p config.ProjectSettings) string {
	if p.Home != "" {
		return p.Home
	}
	if h := p.Env["HOME"]; h != "" {
		return h
	}
	for _, kv := range m.host.InheritEnv() {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	h, _ := os.UserHomeDir()
	return h
}

// latestSession is the id of the most recent conversation the CLI keeps
// for dir ("" when there is none): the transcript written last.
func latestSession(home, dir string) (string, error) {
	list, err := transcript.List(home, dir, 1)
	if err != nil || len(list) == 0 {
		return "", err
	}
	return string(list[0].ID), nil
}

// refusal is why a chat may not continue a session: /continue and a ▶️
// press in /sessions refuse for the same reasons, each in words that name
// what the user did.
type refusal int

const (
	mayContinue    refusal = iota
	ownSession             // the chat's own: it may, as its own
	othersSession          // another chat ran it: never shown here
	ownerUnknown           // the state could not say whose it is
	outsideInGroup         // started outside untether, and this is a group
)

// whyNot says why the chat may not continue session id, given whose it
// is: mayContinue or ownSession when it may.
func (m *Module) whyNot(c *chat.Chat, id string) refusal {
	se, err := m.store.GetSession(c.Ctx(), id)
	switch {
	case err == nil && se.Key != c.Key():
		return othersSession
	case err == nil:
		return ownSession
	case !errors.Is(err, state.ErrNotFound):
		c.Log().Error().Err(err).Str("session", id).Msg("read whose a session is")
		return ownerUnknown
	case c.Group():
		return outsideInGroup
	}
	return mayContinue
}

// continueRefusal says why /continue may not take session id, the most
// recent one in the place ("" when it may).
func (m *Module) continueRefusal(c *chat.Chat, id string) string {
	switch m.whyNot(c, id) {
	case othersSession:
		return "🔒 The most recent Claude session there is another chat's, and /continue takes only this " + c.ChatWord() +
			"'s own sessions" + m.orTerminal(c) + ". /sessions lists this " + c.ChatWord() + "'s."
	case ownerUnknown:
		return "⚠️ Could not tell whose the most recent Claude session there is, so it is not continued."
	case outsideInGroup:
		return "🔒 The most recent Claude session there was started outside untether (at a terminal, say). Everyone in this " +
			c.ChatWord() + " would read it, so /continue here takes only this " + c.ChatWord() +
			"'s own sessions; continue it in a private chat with me instead. /sessions lists this " + c.ChatWord() + "'s."
	}
	return ""
}

// orTerminal completes a refusal's rule for a private chat.
func (m *Module) orTerminal(c *chat.Chat) string {
	if c.Group() {
		return ""
	}
	return " or one started outside untether"
}

// continueText says which session the next message continues, and
// whether untether ran it (else it was started outside untether).
func (m *Module) continueText(c *chat.Chat, id, where, pl string) (string, bool) {
	what := "started outside untether (at a terminal, say)"
	se, err := m.store.GetSession(c.Ctx(), id)
	if err == nil {
		what = "this " + c.ChatWord() + "'s own"
		if p := strings.Join(strings.Fields(se.FirstPrompt), " "); p != "" {
			what += ", “" + render.Truncate(p, chat.SessionPromptMax) + "”"
		}
	}
	return "↪️ Your next message continues the most recent Claude session in <code>" + render.EscapeHTML(where) +
		"</code> (" + render.EscapeHTML(what) + "), in project " + render.Bold(pl) + ".", err == nil
}

// continueLatest is /continue: the next message continues the most recent
// conversation in the project's directory, including one started at a
// terminal there, when the chat may see it.
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

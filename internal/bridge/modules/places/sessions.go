package places

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/transcript"
)

// /sessions lists the chat's last sessions (the state store's), then the
// sessions of the chat's place that were started outside untether (a
// terminal, a person's claude -p), read from the CLI's own transcripts
// (issue 26 §4): per project, and per branch for a worktree, whose
// directory is its own. Those are marked 💻 and offered only in a private
// chat: in a group everyone would read them (as /continue, continue.go).
// A session another chat ran is in the store as that chat's, so it is
// never among them. Each has a ▶️ button; the chat's own resume
// (chat.ResumeSession), one from outside is continued by id
// (resumeOutside) unless it became another chat's since: /continue's
// reasons (whyNot), said of the pressed session. The list ends with the resume line of the chat's
// session (handoff.go).

const (
	// sessionsShown is how many of its own sessions /sessions lists.
	sessionsShown = 10
	// outsideShown is how many sessions from outside untether it lists.
	outsideShown = 5
	// outsideScan is how many transcripts it reads to find them (List
	// bounds what it reads of each).
	outsideScan = 20
	// outsideChoice marks a menu choice that is a session from outside.
	outsideChoice = "x:"
)

// outsideList is what /sessions found outside untether in the place.
type outsideList struct {
	sessions []transcript.Summary
	err      error
}

func (m *Module) listSessions(c *chat.Chat, replyTo int) {
	own, err := m.store.RecentSessions(c.Ctx(), c.Key(), sessionsShown)
	if err != nil {
		c.Log().Error().Err(err).Msg("list sessions")
		c.Reply("⚠️ Could not read this "+c.ChatWord()+"'s sessions.", replyTo)
		return
	}
	cfg := c.Config()
	p, pl := c.Place(cfg)
	line, _ := m.lineOf(c, c.Record().SessionID)
	if p.Remote() {
		m.showSessions(c, own, outsideList{}, pl, line, replyTo,
			"💻 Sessions started at a terminal on "+render.EscapeHTML(p.Host)+" are not listed: untether cannot read the transcripts there.")
		return
	}
	home, dir := m.cliHome(p), chat.PlaceDir(p, pl)
	c.Offload(func(ctx context.Context) func() {
		found := m.outsideSessions(ctx, home, dir)
		return func() {
			note := ""
			switch {
			case found.err != nil:
				c.Log().Warn().Err(found.err).Msg("list the sessions started outside untether")
				note = "⚠️ Could not read the sessions started outside untether in " + render.Code(dir) + "."
			case c.Group() && len(found.sessions) > 0:
				note = "💻 Sessions started outside untether in " + render.Code(dir) + " are offered only in a private chat with me: everyone in this " +
					c.ChatWord() + " would read them."
				found.sessions = nil
			}
			m.showSessions(c, own, found, pl, line, replyTo, note)
		}
	})
}

// outsideSessions reads the sessions of dir that untether did not run,
// newest first.
func (m *Module) outsideSessions(ctx context.Context, home, dir string) outsideList {
	list, err := transcript.List(home, dir, outsideScan)
	if err != nil {
		return outsideList{err: err}
	}
	var out []transcript.Summary
	for _, s := range list {
		_, err := m.store.GetSession(ctx, string(s.ID))
		switch {
		case errors.Is(err, state.ErrNotFound):
			out = append(out, s)
		case err != nil:
			return outsideList{err: err}
		}
		if len(out) == outsideShown {
			break
		}
	}
	return outsideList{sessions: out}
}

// showSessions sends the list with a ▶️ button per session.
func (m *Module) showSessions(c *chat.Chat, own []state.Session, outside outsideList, pl chat.Place, line string, replyTo int, note string) {
	if len(own) == 0 && len(outside.sessions) == 0 {
		text := "No sessions in this " + c.ChatWord() + " yet: your next message starts one."
		if note != "" {
			text += "\n\n" + note
		}
		c.Reply(text, replyTo)
		return
	}
	now := time.Now()
	var b strings.Builder
	var choices, labels []string
	add := func(choice, text string) {
		n := strconv.Itoa(len(choices) + 1)
		choices, labels = append(choices, choice), append(labels, "▶️ "+n)
		b.WriteString("\n" + n + ". " + text)
	}
	if len(own) > 0 {
		b.WriteString("🗂 <b>Sessions</b> (latest first)\n")
		for _, se := range own {
			add(se.ID, chat.SessionLine(se, now))
		}
	}
	if len(outside.sessions) > 0 {
		if len(own) > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("💻 <b>Started outside untether</b> in " + render.Bold(pl.String()) + "\n")
		for _, s := range outside.sessions {
			add(outsideChoice+string(s.ID), outsideLine(s, now))
		}
	}
	b.WriteString("\n\nResume one with its button.")
	if note != "" {
		b.WriteString("\n\n" + note)
	}
	if line != "" {
		b.WriteString("\n\n💻 This " + c.ChatWord() + "'s session at a terminal: " + render.Code(line))
	}
	menu := c.ShowMenuLabeled("session", b.String(), choices, labels, c.Record().SessionID, replyTo)
	menu.SetData(placeData(pl))
}

// outsideLine is one session from outside in /sessions: what it started
// with, when it was last written, how many turns, and where it started.
func outsideLine(s transcript.Summary, now time.Time) string {
	prompt := strings.Join(strings.Fields(s.FirstPrompt), " ")
	if prompt == "" {
		prompt = "(no prompt found)"
	} else {
		prompt = "“" + render.Truncate(prompt, chat.SessionPromptMax) + "”"
	}
	line := render.EscapeHTML(prompt) + " · " + render.FormatElapsed(now.Sub(s.ModTime)) + " ago"
	if s.TurnsExact {
		line += " · " + strconv.Itoa(s.Turns) + " " + map[bool]string{true: "turn", false: "turns"}[s.Turns == 1]
	}
	if s.StartedAtTerminal() {
		return line + " · 💻 at a terminal"
	}
	return line + " · 💻 claude -p"
}

// placeData keeps the place a list was made for with its menu.
func placeData(pl chat.Place) string { return pl.Project + "\n" + pl.Branch }

// pickSession is a ▶️ press in /sessions.
func (m *Module) pickSession(c *chat.Chat, menu *chat.Menu, choice string, respond func(string)) {
	if id, ok := strings.CutPrefix(choice, outsideChoice); ok {
		m.resumeOutside(c, menu.Data(), id, respond)
		return
	}
	c.ResumeSession(choice, respond)
}

// resumeOutside makes the chat's next message continue session id, one
// started outside untether in the place the list was made for.
func (m *Module) resumeOutside(c *chat.Chat, listed, id string, respond func(string)) {
	if c.RefuseBusy(respond) {
		return
	}
	cfg := c.Config()
	p, pl := c.Place(cfg)
	if placeData(pl) != listed || p.Remote() {
		respond("This " + c.ChatWord() + " works in another place since that list was made. Send /sessions again.")
		return
	}
	switch r := m.whyNot(c, id); r {
	case mayContinue:
	case ownSession:
		// Listed as started outside untether, it became this chat's own
		// since (taken up with /continue): resumed as one, and said so.
		c.ResumeSession(id, respond)
		return
	default:
		c.Log().Info().Str("session", id).Msg("refused ▶️ Resume: the session is not this chat's to see")
		respond(m.resumeRefusal(c, r))
		return
	}
	dir := chat.PlaceDir(p, pl)
	path, err := transcript.Path(m.cliHome(p), dir, transcript.SessionID(id))
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		c.Log().Warn().Err(err).Msg("resume a session started outside untether")
		respond("⚠️ That session's transcript is no longer in " + render.Code(dir) + ".")
		return
	}
	if err := c.ContinueSession(pl, id, false); err != nil {
		c.Log().Error().Err(err).Msg("resume a session started outside untether")
		respond("⚠️ Could not resume that session.")
		return
	}
	respond("↩️ Your next message continues session " + render.Code(id) + ", started outside untether, in " + render.Bold(pl.String()) + ".")
}

// resumeRefusal says why a ▶️ press may not resume a session that was
// started outside untether when the list was made, for refusal r. The
// reasons are /continue's (continue.go), but the press named this
// session: it need not be the most recent, and /continue was not used.
// (A group's /sessions lists no such session; outsideInGroup is kept so
// that a press from elsewhere is refused all the same.)
func (m *Module) resumeRefusal(c *chat.Chat, r refusal) string {
	switch r {
	case othersSession:
		return "🔒 That session is another chat's now: it was continued there after this list was made, and ▶️ resumes only this " +
			c.ChatWord() + "'s own sessions" + m.orTerminal(c) + ". Send /sessions again for this " + c.ChatWord() + "'s."
	case ownerUnknown:
		return "⚠️ Could not tell whose that session is, so it is not resumed."
	case outsideInGroup:
		return "🔒 That session was started outside untether (at a terminal, say). Everyone in this " + c.ChatWord() +
			" would read it, so it is not resumed here; resume it in a private chat with me instead."
	}
	return ""
}

package places

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/handoff"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Handing a session to a terminal (issue 26): the resume line is the
// command a person pastes to go on with the phone's session at a terminal,
// in the same session (internal/handoff builds it from where and how
// untether runs the CLI). It ends each answer ([render] show_resume_line),
// with a 💻 Terminal button under it, and /status and /sessions show it.
// 💻 Terminal sends the line alone, easy to copy on a phone, and closes
// the chat's CLI once its turn is over, so that only the terminal writes
// the session; writing from the phone again takes it back (pickup.go).

// btnTerminal is 💻 Terminal; its token is the session id, whose row in
// the state store says which chat it belongs to, so it works after a
// restart.
const btnTerminal chat.ButtonKind = 'T'

// terminalState is a chat's pending hand-over: 💻 Terminal was pressed
// while a turn ran, and the CLI of session closeAfter closes once the
// chat is idle.
type terminalState struct {
	closeAfter string
	remote     string // the project's host, for what is said then
	// closing: the CLI is being closed for the terminal; takenBack: a
	// message (the user's, or a scheduled or webhook run that waited for
	// the turn's end) went to Claude meanwhile, so the session is not the
	// terminal's when the close is done.
	closing, takenBack bool
}

// where is where the CLI of a session runs: its project and its working
// directory ("" when it would be the place's).
type where struct {
	p   config.ProjectSettings
	pl  chat.Place
	dir string
}

// sessionWhere finds where session id runs: the live CLI's place and
// directory when it runs id, else the place the state store keeps for it.
func (m *Module) sessionWhere(c *chat.Chat, id string) (where, error) {
	cfg := c.Config()
	var w where
	if sess := c.Session(); sess != nil && string(sess.ID()) == id {
		w.pl, w.dir = c.SessionPlace(), c.SessionDir()
	} else {
		se, err := m.store.GetSession(c.Ctx(), id)
		if err != nil {
			return where{}, fmt.Errorf("find session %s: %w", id, err)
		}
		w.pl = chat.Place{Project: se.Project, Branch: se.Branch}
	}
	p, ok := cfg.Project(w.pl.Project)
	if !ok {
		return where{}, fmt.Errorf("project %s is no longer configured", w.pl.Project)
	}
	w.p = p
	if w.dir == "" {
		w.dir = chat.PlaceDir(p, w.pl)
	}
	return w, nil
}

// resumeLine is the command that resumes session id at a terminal, where
// it runs (w).
func (m *Module) resumeLine(w where, id string) (string, error) {
	sid, err := runner.ParseSessionID(id)
	if err != nil {
		return "", fmt.Errorf("resume line: %w", err)
	}
	r := handoff.Resume{ID: sid, Dir: w.dir, Binary: w.p.Binary}
	if w.p.Remote() {
		r.Remote = &runner.Remote{Host: w.p.Host, SSHOptions: w.p.SSHOptions}
		r.Home = remoteHome(w.p)
	} else {
		r.Home = m.cliHome(w.p) // continue.go
		if r.Daemon, r.Owner, err = m.accounts.of(w.dir, time.Now()); err != nil {
			return "", fmt.Errorf("resume line: %w", err)
		}
	}
	return r.Line()
}

// remoteHome is the HOME a project on another host gives its CLI, "" when
// it sets none (the login's own).
func remoteHome(p config.ProjectSettings) string {
	if p.Home != "" {
		return p.Home
	}
	return p.Env["HOME"]
}

// lineOf is session id's resume line, "" (logged) when none can be made.
func (m *Module) lineOf(c *chat.Chat, id string) (string, where) {
	if id == "" {
		return "", where{}
	}
	w, err := m.sessionWhere(c, id)
	if err == nil {
		var line string
		if line, err = m.resumeLine(w, id); err == nil {
			return line, w
		}
	}
	c.Log().Warn().Err(err).Str("resume", id).Msg("no resume line for the session")
	return "", w
}

// onAnswer ends an answer with the resume line and 💻 Terminal.
func (m *Module) onAnswer(c *chat.Chat, tc runner.TurnCompleted, a *chat.Answer) {
	if !c.Config().Render.ShowResumeLine {
		return
	}
	line, _ := m.lineOf(c, string(tc.SessionID))
	if line == "" {
		return
	}
	a.Meta.ResumeLine = line
	a.Keyboard.Rows = append(a.Keyboard.Rows, []render.Button{{Text: "💻 Terminal", CallbackData: chat.CallbackData(btnTerminal, string(tc.SessionID))}})
}

// onStatus adds the resume line of the chat's session to /status.
func (m *Module) onStatus(c *chat.Chat, info *render.StatusInfo) {
	info.ResumeLine, _ = m.lineOf(c, c.Record().SessionID)
}

// resolveTerminal finds the chat a 💻 Terminal press belongs to: the one
// whose session the token names.
func (m *Module) resolveTerminal(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*chat.Chat), string) {
	se, err := m.store.GetSession(ctx, token)
	if err != nil {
		return state.ChatKey{}, nil, chat.ExpiredText
	}
	msgID := 0
	if cq.Message.Message != nil {
		msgID = cq.Message.Message.ID
	}
	return se.Key, func(c *chat.Chat) { m.toTerminal(c, se.ID, msgID) }, ""
}

// sampleTerminal makes a session of key whose 💻 Terminal works
// (chat.StoredButton.Sample).
func (m *Module) sampleTerminal(ctx context.Context, key state.ChatKey) (string, error) {
	id := string(runner.NewSessionID())
	return id, m.store.NoteSession(ctx, key, m.host.Config().DefaultProjectFor(key.Thread != 0), "", id)
}

// toTerminal is 💻 Terminal on an answer of session id: the line alone,
// then the session handed over.
func (m *Module) toTerminal(c *chat.Chat, id string, replyTo int) {
	line, w := m.lineOf(c, id)
	if line == "" {
		c.Reply("⚠️ untether cannot make the command that resumes this session at a terminal; the log says why.", replyTo)
		return
	}
	c.SendMessage(outbox.High, outbox.Content{Text: render.Code(line)}, outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
	if id != c.Record().SessionID {
		c.Reply("💻 That is an earlier session of this "+c.ChatWord()+": the command above goes on with it at a terminal. /sessions lists this "+c.ChatWord()+"'s last sessions, with ▶️ to resume one here.", 0)
		return
	}
	remote := ""
	if w.p.Remote() {
		remote = w.p.Host
	}
	sess := c.Session()
	if sess == nil || string(sess.ID()) != id || sess.PID() == 0 {
		c.Reply(yoursText(remote), 0)
		return
	}
	if c.Busy() {
		*m.terminal.Get(c) = terminalState{closeAfter: id, remote: remote}
		c.Reply("💻 Claude here closes this session once its turn is over; then it is yours at the terminal.", 0)
		return
	}
	m.closeFor(c, sess, remote)
}

// closeForTerminal closes the chat's CLI for a hand-over asked while it
// was busy, once it is idle.
func (m *Module) closeForTerminal(c *chat.Chat) {
	st := m.terminal.Get(c)
	if st.closeAfter == "" || c.Busy() {
		return
	}
	id, remote := st.closeAfter, st.remote
	*st = terminalState{}
	if sess := c.Session(); sess != nil && string(sess.ID()) == id && sess.PID() != 0 {
		m.closeFor(c, sess, remote)
	}
}

// closeFor closes sess's process (the session stays the chat's: its next
// message resumes it) and then says the session is the terminal's.
func (m *Module) closeFor(c *chat.Chat, sess *runner.Session, remote string) {
	st := m.terminal.Get(c)
	st.closing, st.takenBack = true, false
	c.Offload(func(ctx context.Context) func() {
		err := sess.CloseProcess(ctx)
		return func() {
			taken := st.takenBack
			st.closing, st.takenBack = false, false
			if taken {
				c.Log().Info().AnErr("close_error", err).Msg("a message went to Claude while its CLI was closed for a terminal: the session is not the terminal's")
				c.Reply("💻 A message went to Claude here while it was being closed for the terminal, so Claude here runs this session again. "+
					"Press 💻 Terminal once that turn is over.", 0)
				return
			}
			if err != nil {
				c.Log().Error().Err(err).Msg("close the CLI for a terminal")
				c.Reply("⚠️ Could not close Claude here, so it may still write this session: "+render.EscapeHTML(err.Error()), 0)
				return
			}
			c.Log().Info().Str("resume", string(sess.ID())).Msg("closed the CLI: the session is the terminal's")
			c.Reply(yoursText(remote), 0)
		}
	})
}

// yoursText says the session is the terminal's now, and for a project on
// another host what untether cannot check there.
func yoursText(remote string) string {
	text := "💻 This session is yours at the terminal now; write here to take it back."
	if remote != "" {
		text += "\n\nIt runs on " + render.Bold(remote) + ", where untether cannot look: it does not warn you when a claude there runs this session, " +
			"and does not notice turns typed there while its own Claude is open. Claude here is closed now, so your next message here resumes with everything written there."
	}
	return text
}

// accountsFor is how long the accounts of a directory are kept: the
// password database is read on the actor, once an answer, and with a
// network directory behind it a lookup can be slow.
const accountsFor = 5 * time.Minute

// accountCache keeps handoff.LocalAccounts by directory.
type accountCache struct {
	mu sync.Mutex
	m  map[string]accountsAt
}

type accountsAt struct {
	daemon, owner handoff.Account
	at            time.Time
}

// of is LocalAccounts(dir), looked up again after accountsFor.
func (a *accountCache) of(dir string, now time.Time) (daemon, owner handoff.Account, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.m[dir]; ok && now.Sub(e.at) < accountsFor {
		return e.daemon, e.owner, nil
	}
	if daemon, owner, err = handoff.LocalAccounts(dir); err != nil {
		return handoff.Account{}, handoff.Account{}, err
	}
	if a.m == nil || len(a.m) > 256 {
		a.m = map[string]accountsAt{} // worktrees come and go
	}
	a.m[dir] = accountsAt{daemon, owner, now}
	return daemon, owner, nil
}

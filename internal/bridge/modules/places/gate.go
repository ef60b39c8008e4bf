package places

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/config"
)

// Before each message from the phone goes to Claude (OnSend), the places
// module looks at the session it goes to: a claude outside untether that
// runs it holds the message and asks first (outside.go), and a transcript
// a terminal extended makes the CLI resume it anew (pickup.go).

// spot is where the chat's next message goes: its session, the project
// and the CLI's directory and HOME, on this machine or not.
type spot struct {
	id    string
	p     config.ProjectSettings
	dir   string
	home  string
	local bool
}

// spotOf is where c's next message goes: to the live CLI, where it runs,
// else to the session of the chat's place.
func (m *Module) spotOf(c *chat.Chat) spot {
	cfg := c.Config()
	var sp spot
	if sess := c.Session(); sess != nil {
		sp.p = m.sessionProject(c)
		sp.id, sp.dir, sp.local = string(sess.ID()), c.SessionDir(), c.SessionDir() != ""
		if !sp.local {
			sp.dir = chat.PlaceDir(sp.p, c.SessionPlace())
		}
	} else {
		p, pl := c.Place(cfg)
		sp.p, sp.id, sp.dir, sp.local = p, c.Record().SessionID, chat.PlaceDir(p, pl), !p.Remote()
	}
	sp.home = m.cliHome(sp.p)
	return sp
}

// sessionProject is the project the live CLI runs in, as the config has
// it now (its place's project, else the chat's).
func (m *Module) sessionProject(c *chat.Chat) config.ProjectSettings {
	cfg := c.Config()
	if p, ok := cfg.Project(c.SessionPlace().Project); ok {
		return p
	}
	return c.Project(cfg)
}

// beforeSend is the OnSend gate.
func (m *Module) beforeSend(c *chat.Chat, o *chat.Outgoing) bool {
	// Writing here takes the session back: a 💻 Terminal pressed during a
	// turn no longer closes the CLI once its turns are over, and one being
	// closed does not end up the terminal's once the message goes on (one
	// held for a claude at the terminal does not).
	st := m.terminal.Get(c)
	if !st.closing {
		*st = terminalState{}
	}
	sp := m.spotOf(c)
	if !m.passOutside(c, o, sp) {
		return false
	}
	if st.closing {
		st.takenBack = true
	}
	m.checkTranscript(c, sp)
	return true
}

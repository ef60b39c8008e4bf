package places

import (
	"context"
	"strings"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// chooseProject is /project: without an argument it lists the projects as
// buttons, with a name it switches the chat (in a forum topic: binds the
// topic) to it.
func (m *Module) chooseProject(c *chat.Chat, arg string, replyTo int) {
	name := strings.TrimSpace(arg)
	cfg := c.Config()
	cur, pl := c.Place(cfg)
	if name == "" {
		c.ShowMenu("project", "📁 This "+c.ChatWord()+" works in <b>"+render.EscapeHTML(pl.String())+"</b>.\n\n"+projectList(cfg, c.ProjectNames(cfg))+
			"\nChoose a project, or send <code>/project NAME</code>:", c.ProjectNames(cfg), cur.Name, replyTo)
		return
	}
	if _, ok := cfg.Project(name); !ok {
		c.ShowMenu("project", "❓ There is no project <b>"+render.EscapeHTML(name)+"</b>.\n\n"+projectList(cfg, c.ProjectNames(cfg))+"\nChoose one:",
			c.ProjectNames(cfg), cur.Name, replyTo)
		return
	}
	m.applyProject(c, name, func(html string) { c.Reply(html, replyTo) })
}

// applyProject switches the chat to the project called name.
func (m *Module) applyProject(c *chat.Chat, name string, respond func(string)) {
	cfg := c.Config()
	p, ok := cfg.Project(name)
	if !ok {
		respond("❓ There is no project " + render.Bold(name) + " any more. /project lists them.")
		return
	}
	if !c.MayUse(p) {
		respond(c.NotOpenText(p))
		return
	}
	_, cur := c.Place(cfg)
	to := chat.Place{Project: p.Name}
	if cur == to && c.Record().Project != "" {
		respond(c.ArrivedText(p, to))
		return
	}
	if err := chat.CheckProjectDir(p); err != nil {
		respond("⚠️ The directory of project " + render.Bold(p.Name) + " cannot be used: " + render.EscapeHTML(err.Error()) +
			"\nThis " + c.ChatWord() + " stays in " + render.Bold(cur.String()) + ".")
		return
	}
	if c.SwitchPlace(to, respond) {
		respond(c.ArrivedText(p, to))
	}
}

// projectList is one line per project of names: its name, description
// and where.
func projectList(cfg *config.Config, names []string) string {
	var b strings.Builder
	for _, name := range names {
		p, _ := cfg.Project(name)
		b.WriteString("• " + render.Bold(name))
		if p.Description != "" {
			b.WriteString(" — " + render.EscapeHTML(p.Description))
		}
		b.WriteString(" · " + render.Code(chat.WhereText(p, chat.Place{Project: name})) + "\n")
	}
	return b.String()
}

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	log   *zerolog.Logger

	// The hand-over between the phone and a terminal (handoff.go,
	// pickup.go, outside.go).
	terminal chat.Slot[terminalState]
	pickup   chat.Slot[pickup]
	hold     chat.Slot[held]
	waits    waits
	accounts accountCache
}

// store is what the module reads of the state database (and writes, for
// a 💻 Terminal button's Sample).
type store interface {
	RecentSessions(ctx context.Context, key state.ChatKey, n int) ([]state.Session, error)
	GetSession(ctx context.Context, id string) (state.Session, error)
	NoteSession(ctx context.Context, key state.ChatKey, project, branch, id string) error
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, store: h.Store(), log: h.Logger()} }

// Register adds /project, /topic, /branch, /sessions and /continue, and
// the hand-over between the phone and a terminal: the resume line, 💻
// Terminal, and the gate before each message (gate.go).
func (m *Module) Register(r *chat.Registry) {
	r.Command(chat.Command{Name: "project", Help: "Show or switch the project (in a topic: bind it)",
		Run: func(c *chat.Chat, in chat.Invocation) { m.chooseProject(c, in.Args, in.Msg.ID) }})
	r.Command(chat.Command{Name: "topic", Help: "New forum topic for a project: /topic NAME [BRANCH]",
		Run: func(c *chat.Chat, in chat.Invocation) { m.createTopic(c, in.Args, in.Msg) }})
	r.Command(chat.Command{Name: "branch", Help: "Work in a git worktree: /branch NAME, /branch - for main",
		Run: func(c *chat.Chat, in chat.Invocation) { m.chooseBranch(c, in.Args, in.Msg.ID) }})
	r.Command(chat.Command{Name: "sessions", Help: "This chat's last sessions, with Resume buttons",
		Run: func(c *chat.Chat, in chat.Invocation) { m.listSessions(c, in.Msg.ID) }})
	r.Command(chat.Command{Name: "continue", Help: "Continue the latest session in the project, e.g. from a terminal",
		Run: func(c *chat.Chat, in chat.Invocation) { m.continueLatest(c, in.Msg.ID) }})
	r.Menu("project", chat.MenuKind{Pick: func(c *chat.Chat, _ *chat.Menu, choice string, respond func(string)) {
		m.applyProject(c, choice, respond)
	}})
	r.Menu("branch", chat.MenuKind{Pick: func(c *chat.Chat, menu *chat.Menu, choice string, respond func(string)) {
		m.applyBranch(c, menu.Data(), choice, respond)
	}})
	r.Menu("session", chat.MenuKind{Columns: 5, Pick: m.pickSession}) // "▶️ 1" … "▶️ 15"
	m.registerHandoff(r)
}

// registerHandoff adds the hand-over between the phone and a terminal.
func (m *Module) registerHandoff(r *chat.Registry) {
	m.terminal, m.pickup, m.hold = chat.NewSlot[terminalState](r), chat.NewSlot[pickup](r), chat.NewSlot[held](r)
	r.OnAnswer(m.onAnswer)
	r.OnStatus(m.onStatus)
	r.OnEvent(m.onEvent)
	r.OnSend(m.beforeSend)
	r.OnTurnEnd(func(c *chat.Chat, _ chat.TurnEnd) { m.closeForTerminal(c) })
	r.StoredButton(btnTerminal, chat.StoredButton{Ack: "💻 The command for a terminal…", Resolve: m.resolveTerminal, Sample: m.sampleTerminal,
		WaitFirst: true, Wait: "untether is restarting; press 💻 Terminal again once it is back."})
	r.Button(btnContinueAnyway, chat.Button{Ack: "Sending…", Press: func(c *chat.Chat, p chat.Press) { m.continueAnyway(c, p.Token) }})
	r.Button(btnWaitTerminal, chat.Button{Ack: "Waiting", Press: func(c *chat.Chat, p chat.Press) { m.waitForTerminal(c, p.Token) }})
}

package effort

import (
	"context"
	"strings"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Module is the feature.
type Module struct {
	state chat.Slot[applied] // what the chat's live CLI applies (applied.go)
}

// New builds the module.
func New() *Module { return &Module{} }

// defaultChoice is the menu's choice (and /effort's argument) that drops
// the chat's own level, so it follows the config again.
const defaultChoice = "default"

// Register adds /effort, the level at each spawn, what the live CLI
// applies, and the effort's line in /status and in the answers' footers.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[applied](r)
	r.Command(chat.Command{Name: "effort", Help: "Show or switch the effort level (low, medium, high, xhigh, max)",
		Run: func(c *chat.Chat, in chat.Invocation) { m.command(c, in.Args, in.Msg.ID) }})
	r.Menu("effort", chat.MenuKind{Columns: 3, Pick: func(c *chat.Chat, _ *chat.Menu, choice string, respond func(string)) {
		m.apply(c, choice, respond)
	}})
	r.OnSpawn(func(c *chat.Chat, rc *runner.Config, _ chat.Place) { rc.Effort = spawnEffort(c, c.Project(c.Config())) })
	r.OnEvent(func(c *chat.Chat, ev runner.Event) {
		if ts, ok := ev.(runner.TurnStarted); ok {
			m.turnStarted(c, ts) // applied.go
		}
	})
	r.OnAnswer(func(c *chat.Chat, tc runner.TurnCompleted, a *chat.Answer) {
		// A turn that made no model call (the CLI refused it first, a
		// local command) ran with no effort at all.
		if e := m.turnEffort(c); tc.Usage.ContextTokens() > 0 {
			a.Meta.Effort = e
		}
	})
	r.OnStatus(func(c *chat.Chat, info *render.StatusInfo) { info.Effort = m.statusText(c) })
}

// chosen is the chat's own level, "" when it chose none.
func chosen(c *chat.Chat) runner.Effort { return runner.Effort(c.Record().Effort) }

// spawnEffort is the level the chat's next CLI starts with: its own
// choice, else the project's ("" leaves the CLI's default). A stored
// choice that is not a level (the database was edited) is dropped, and
// the chat told: it must never become an argument.
func spawnEffort(c *chat.Chat, p config.ProjectSettings) runner.Effort {
	e := chosen(c)
	if e == "" {
		return p.Effort
	}
	if e.Valid() {
		return e
	}
	c.Log().Error().Str("stored", string(e)).Msg("the chat's stored effort is not a level; using the configured one")
	c.SaveRecord(func(r *state.Chat) { r.Effort = "" })
	c.Reply("⚠️ This "+c.ChatWord()+"'s chosen effort <code>"+render.EscapeHTML(string(e))+"</code> is not a level, so Claude starts with "+
		render.EscapeHTML(levelName(p.Effort))+". /effort changes it.", 0)
	return p.Effort
}

// current is the level the chat asks for: its own, else the project's.
func current(c *chat.Chat) runner.Effort {
	if e := chosen(c); e.Valid() {
		return e
	}
	return c.Project(c.Config()).Effort
}

// levelName names a level for a person; "" is the CLI's own default.
func levelName(e runner.Effort) string {
	if e == "" {
		return "Claude Code's default"
	}
	return string(e)
}

// command is /effort: without an argument a menu of the levels with the
// current one marked, else the switch.
func (m *Module) command(c *chat.Chat, arg string, replyTo int) {
	arg = strings.TrimSpace(arg)
	if arg != "" {
		m.apply(c, arg, func(html string) { c.Reply(html, replyTo) })
		return
	}
	choices := []string{defaultChoice}
	for _, e := range runner.Efforts {
		choices = append(choices, string(e))
	}
	mark := string(current(c))
	if mark == "" {
		mark = defaultChoice
	}
	c.ShowMenu("effort", m.describe(c)+"\nChoose the effort for this "+c.ChatWord()+" (<i>default</i> follows the config), or send <code>/effort LEVEL</code>:",
		choices, mark, replyTo)
}

// describe says the chat's effort, where it comes from, and what the live
// CLI's model applies when that is known.
func (m *Module) describe(c *chat.Chat) string {
	e, from := current(c), "this "+c.ChatWord()+"'s choice"
	if chosen(c) == "" {
		from = "the configured default"
	}
	out := "Effort: <b>" + render.EscapeHTML(levelName(e)) + "</b> (" + from + ")"
	if st := m.state.Get(c); st.of(c.Session()) {
		out += "\n" + appliedText(st.level, st.supported)
	}
	return out
}

// apply switches the chat to the level arg names ("default": the
// config's) and tells the user through respond what Claude really does.
func (m *Module) apply(c *chat.Chat, arg string, respond func(html string)) {
	p := c.Project(c.Config())
	own, target := runner.Effort(""), p.Effort
	if strings.ToLower(strings.TrimSpace(arg)) != defaultChoice {
		e, err := runner.ParseEffort(arg)
		if err != nil {
			respond("Usage: <code>/effort low|medium|high|xhigh|max</code>, <code>/effort default</code> to follow the config, or /effort alone for buttons.")
			return
		}
		own, target = e, e
	}
	sess := c.Session()
	chosenText := "Effort: <b>" + render.EscapeHTML(levelName(target)) + "</b>"
	if sess == nil {
		record(c, own)
		respond(chosenText + "\nClaude has not started yet; it starts with this effort.")
		return
	}
	// Stored now, on the actor, in the order the choices came (SetEffort
	// adopts it for the next process whatever the live one says): two
	// quick changes whose calls return in reverse order keep the last.
	record(c, own)
	m.changing(c)
	c.Offload(func(ctx context.Context) func() {
		ch, err := sess.SetEffort(ctx, target)
		return func() {
			m.changed(c, sess, ch, err)
			respond(chosenText + "\n" + changeText(ch, err))
		}
	})
}

// record stores own as the chat's level ("" follows the config).
func record(c *chat.Chat, own runner.Effort) {
	if runner.Effort(c.Record().Effort) != own {
		c.SaveRecord(func(r *state.Chat) { r.Effort = string(own) })
	}
}

// changeText says what a live change did.
func changeText(ch runner.EffortChange, err error) string {
	switch {
	case err != nil && !ch.Live:
		return "⚠️ The running Claude did not take it (" + render.EscapeHTML(err.Error()) + "); it starts with this effort when it next starts."
	case err != nil:
		return "Claude took it, but could not say what its model applies: " + render.EscapeHTML(err.Error())
	case !ch.Live:
		return "Claude is not running; it starts with this effort when it next starts."
	case !ch.Supported:
		return appliedText(ch.Applied, false) + "."
	}
	return appliedText(ch.Applied, true) + ", from its next request."
}

// appliedText says what the live CLI's model applies.
func appliedText(level runner.Effort, supported bool) string {
	if !supported {
		return "Claude's current model takes no effort level, so its requests carry none"
	}
	return "Claude's model applies <b>" + render.EscapeHTML(string(level)) + "</b>"
}

// statusText is /status's effort: the level the chat asks for, and what
// the live CLI's model applies when it differs or is none.
func (m *Module) statusText(c *chat.Chat) string {
	e := current(c)
	out := levelName(e)
	st := m.state.Get(c)
	switch {
	case !st.of(c.Session()):
	case !st.supported:
		out += " (the model takes none)"
	case st.level != e:
		out += " (the model applies " + string(st.level) + ")"
	}
	return out
}

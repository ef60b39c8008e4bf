package compact

import (
	"context"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// btnCompact is 🗜 Compact; its token is in the engine's table, one live
// per chat (the latest answer's).
const btnCompact chat.ButtonKind = 'C'

// Module is the feature.
type Module struct{ state chat.Slot[filling] }

// New builds the module.
func New() *Module { return &Module{} }

// filling is a chat's compaction facts and its live Compact button.
type filling struct {
	// manualOff and autoOff are what the environment of the CLI that
	// runs turns off (DISABLE_COMPACT, DISABLE_AUTO_COMPACT), taken when
	// it was started.
	manualOff, autoOff bool
	// usage is what the process proc answered to get_context_usage.
	usage  runner.ContextUsage
	proc   procKey
	known  bool
	asking bool
	token  string // the live Compact button, "" if none
	// session is the session whose context the live button compacts: a
	// press after /new, a switch or a resume would compact another one.
	session string
}

// procKey is one CLI process, with the model of its answers: where it
// compacts by itself depends on the model's window.
type procKey struct {
	sess  *runner.Session
	pid   int
	model string
}

// Register adds the hooks and the button.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[filling](r)
	r.OnSpawn(func(c *chat.Chat, rc *runner.Config, _ chat.Place) {
		st := m.state.Get(c)
		st.manualOff, st.autoOff = runner.CompactDisabled(rc.Env)
		st.known = false
	})
	r.OnAnswer(m.onAnswer)
	r.Button(btnCompact, chat.Button{Ack: "Compacting…",
		Stale: "This 🗜 Compact button is no longer current. Send /compact to compact now.",
		Press: m.press})
}

// onAnswer fills the footer's context alert and, at the warning, offers
// 🗜 Compact.
func (m *Module) onAnswer(c *chat.Chat, tc runner.TurnCompleted, a *chat.Answer) {
	st := m.state.Get(c)
	cfg := c.Config()
	sess := c.Session()
	key := procKey{}
	if sess != nil {
		key = procKey{sess: sess, pid: sess.PID(), model: tc.Model}
	}
	a.Meta.Context = render.ContextAlert{WarnAt: 100 * cfg.Render.ContextWarnAt, FullAt: 100 * cfg.Render.ContextFullAt}
	a.Meta.Context.Compaction, a.Meta.Context.AutoAt = st.compaction(key)
	if a.Meta.ContextLevel(tc) < render.ContextWarn {
		return
	}
	if a.Meta.Context.Compaction == render.CompactionUnknown {
		m.learn(c, key)
	}
	if !a.Meta.OffersCompact(tc) {
		return
	}
	if st.token != "" {
		c.ForgetButton(st.token) // one live per chat: the latest answer's
	}
	st.token, st.session = chat.NewToken(), c.Record().SessionID
	c.RegisterButton(st.token)
	a.Keyboard.Rows = append(a.Keyboard.Rows, render.CompactKeyboard(chat.CallbackData(btnCompact, st.token)).Rows...)
}

// compaction is what the CLI of process key does about a full context,
// as far as it is known, and where it compacts by itself (a share).
func (st *filling) compaction(key procKey) (render.Compaction, float64) {
	switch {
	case st.manualOff:
		return render.CompactionOff, 0
	case st.autoOff:
		return render.CompactionManual, 0
	case !st.known || st.proc != key:
		return render.CompactionUnknown, 0
	case st.usage.AutoCompact:
		return render.CompactionAuto, st.usage.AutoCompactPercent()
	}
	return render.CompactionManual, 0 // its settings turned it off (autoCompactEnabled)
}

// learn asks process key, off the actor, how it compacts, for the answers
// after this one.
func (m *Module) learn(c *chat.Chat, key procKey) {
	st := m.state.Get(c)
	if key.sess == nil || key.pid == 0 || key.model == "" || st.asking {
		return
	}
	st.asking = true
	c.Offload(func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, runner.DefaultControlTimeout)
		defer cancel()
		u, err := key.sess.ContextUsage(ctx)
		return func() {
			st := m.state.Get(c)
			st.asking = false
			if err != nil {
				c.Log().Info().Err(err).Msg("ask the CLI how it compacts")
				return
			}
			c.Log().Debug().Bool("auto", u.AutoCompact).Int64("at", u.AutoCompactAt).Int64("window", u.Window).Msg("the CLI says how it compacts")
			st.usage, st.proc, st.known = u, key, true
		}
	})
}

// press sends /compact to the session, from the user who pressed, as an
// answer to the message the button is on.
func (m *Module) press(c *chat.Chat, p chat.Press) {
	st := m.state.Get(c)
	if p.Token != st.token {
		return
	}
	c.ForgetButton(st.token)
	st.token = ""
	if st.session != c.Record().SessionID {
		c.Reply("This 🗜 Compact button was for an earlier session, so nothing was compacted. Send /compact to compact this one.", p.Message)
		return
	}
	c.Send(runner.UserInput{Text: "/compact"}, p.Message, state.UserID(p.From.ID))
}

package login

import (
	"context"
	"sync"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	clilogin "github.com/untether/untether/internal/login"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Buttons: 🔑 Log in under a turn the login failed, ✖️ Cancel under the
// login message; their tokens are in the engine's table.
const (
	btnLogin       chat.ButtonKind = 'K'
	btnCancelLogin chat.ButtonKind = 'x'
)

// Module is the feature.
type Module struct {
	host  *chat.Host
	log   *zerolog.Logger
	auth  authCache
	relay clilogin.Relay // one login at a time on the daemon
	state chat.Slot[chatLogin]
	fail  chat.Slot[failed]

	mu      sync.Mutex
	runCtx  context.Context // Start's: a login ends when the bridge stops
	running *attempt        // the login the daemon runs, nil if none
	wg      sync.WaitGroup  // the logins' relays (goLogin)
}

// failed is a chat's live 🔑 Log in button, "" if none.
type failed struct{ token string }

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, log: h.Logger()} }

// Register adds /login, the login's line in /status, the expiry note,
// 🔑 Log in under a turn the login failed, and the code's capture.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[chatLogin](r)
	m.fail = chat.NewSlot[failed](r)
	r.Command(chat.Command{Name: "login", Help: "Sign Claude Code in (private chat only)",
		Run: func(c *chat.Chat, in chat.Invocation) { m.loginCommand(c, in.Msg.ID) }})
	r.OnMessage(m.takeCode) // relay.go: before anything else reads the code
	r.OnCancel(m.cancel)
	r.OnStatus(func(c *chat.Chat, info *render.StatusInfo) { info.Login = m.statusText(c) })
	r.AnswerNotes(func(c *chat.Chat, tc runner.TurnCompleted) []string {
		var notes []string
		if n := m.expiryNote(c); n != "" {
			notes = append(notes, n)
		}
		if loginFailure(tc) {
			notes = append(notes, m.failureNote(c))
		}
		return notes
	})
	r.OnAnswer(m.offerLogin)
	r.Button(btnLogin, chat.Button{Ack: "Starting the login…", Stale: "This button is no longer current. Send /login to sign in.",
		Press: func(c *chat.Chat, p chat.Press) {
			if st := m.fail.Get(c); st.token == p.Token {
				c.ForgetButton(st.token)
				st.token = ""
				m.loginCommand(c, p.Message)
			}
		}})
	r.Button(btnCancelLogin, chat.Button{Ack: "Cancelling…", Stale: "This login is already over.",
		Press: func(c *chat.Chat, p chat.Press) {
			if a := m.state.Get(c).cur; a != nil && a.token == p.Token {
				a.end()
			}
		}})
}

// failureNote says what to do about a turn the login failed.
func (m *Module) failureNote(c *chat.Chat) string {
	switch {
	case c.Group():
		return "🔑 An allowed user can sign Claude Code in with /login in a private chat with the bot."
	case m.loginHelps(c):
		return "🔑 Log in below (or /login) signs Claude Code in from here."
	}
	return "🔑 Claude Code uses a key or token from its environment, which a login here does not replace: fix it in the config."
}

// offerLogin puts 🔑 Log in under a turn the login failed, in a private
// chat, and asks `claude auth status` again.
func (m *Module) offerLogin(c *chat.Chat, tc runner.TurnCompleted, a *chat.Answer) {
	if !loginFailure(tc) {
		return
	}
	defer m.refresh(c, c.Project(c.Config()), true)
	if c.Group() || !m.loginHelps(c) {
		return
	}
	st := m.fail.Get(c)
	if st.token != "" {
		c.ForgetButton(st.token)
	}
	st.token = chat.NewToken()
	c.RegisterButton(st.token)
	a.Keyboard.Rows = append(a.Keyboard.Rows, []render.Button{{Text: "🔑 Log in", CallbackData: chat.CallbackData(btnLogin, st.token)}})
}

// Start asks the default project's CLI whether it is logged in, so the
// first /status knows, then keeps logins running until ctx ends, and ends
// them.
func (m *Module) Start(ctx context.Context) {
	m.mu.Lock()
	m.runCtx = ctx
	m.mu.Unlock()
	if p, ok := m.host.Config().Project(m.host.Config().Telegram.DefaultProject); ok && !p.Remote() {
		m.check(ctx, m.whereOf(p), false)
	}
	<-ctx.Done()
	m.mu.Lock()
	m.runCtx = nil // no login starts from here on
	m.mu.Unlock()
	m.wg.Wait() // each login ends with ctx
}

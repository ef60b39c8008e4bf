package login

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	clilogin "github.com/untether/untether/internal/login"
	"github.com/untether/untether/internal/render"
)

// /login runs `claude auth login` of the chat's project's CLI under a
// pseudo-terminal (internal/login) and relays it: the sign-in URL as a
// button, the code the user sends back (a reply to that message) typed at
// the program and its message deleted at once, the outcome, and then what
// `claude auth status` says. One login runs at a time on the daemon (they
// would race for the same credentials): a second /login in the chat that
// runs one replaces it, one from another chat is refused. /cancel, ✖️
// Cancel and login_timeout end it; so does the bridge stopping.

// loginTitle starts the login message; a reply to a bot message that
// starts with it is a code, whether or not its login still runs, and
// never reaches Claude.
const loginTitle = "🔑 Sign in to Claude Code"

// attempt is one /login. Its fields are the actor's, but done, which its
// relay closes once the login program is gone.
type attempt struct {
	key      state.ChatKey
	sess     *clilogin.Session // once started
	done     chan struct{}
	msg      *outbox.Message // the login message, once the URL is shown
	url      string
	token    string // ✖️ Cancel's
	codeSent bool
	stop     bool // cancelled (or replaced) before it started
	replaced bool // a newer /login ends it
	timeout  time.Duration
}

// end stops the login, now or as soon as it has started.
func (a *attempt) end() {
	a.stop = true
	if a.sess != nil {
		a.sess.Cancel()
	}
}

// chatLogin is a chat's login, nil when none runs for it.
type chatLogin struct{ cur *attempt }

// loginCommand is /login: in a private chat only, for the chat's
// project's CLI on this machine.
func (m *Module) loginCommand(c *chat.Chat, replyTo int) {
	if c.Group() {
		c.Reply("🔑 /login works only in a private chat with the bot: the sign-in link and code are not for a group.", replyTo)
		return
	}
	cfg := c.Config()
	p := c.Project(cfg)
	if p.Remote() {
		c.Reply("🔑 Claude for project <b>"+render.EscapeHTML(p.Name)+"</b> runs on "+render.EscapeHTML(p.Host)+
			"; /login signs in only a Claude on this machine. Log in there with <code>claude auth login</code>.", replyTo)
		return
	}
	timeout := loginTimeout(cfg)
	a := &attempt{key: c.Key(), done: make(chan struct{}), timeout: timeout}
	m.mu.Lock()
	runCtx, running := m.runCtx, m.running
	if runCtx != nil && (running == nil || running.key == a.key) {
		m.running = a
	}
	m.mu.Unlock()
	switch {
	case runCtx == nil:
		c.Reply("untether is still starting; send /login again in a moment.", replyTo)
		return
	case running != nil && running.key != a.key:
		c.Reply("🔑 A login started from another chat is running; only one runs at a time. Try again once it ends (at most "+
			render.FormatElapsed(timeout)+").", replyTo)
		return
	}
	st := m.state.Get(c)
	old := st.cur
	if old != nil {
		old.replaced = true
		old.end()
	}
	st.cur = a
	w := m.whereOf(p)
	log := c.Log()
	started := m.goLogin(func() {
		defer close(a.done)
		defer m.release(a)
		if old != nil {
			<-old.done // the relay runs one session at a time
		}
		sess, err := m.relay.Start(runCtx, clilogin.AuthLoginCommand(w.binary, w.env), clilogin.Options{Timeout: timeout, Logger: log})
		if err != nil {
			c.Post(func() {
				m.forget(c, a)
				c.Reply("⚠️ Could not start the login: "+render.EscapeHTML(err.Error()), replyTo)
			})
			return
		}
		c.Post(func() {
			a.sess = sess
			if a.stop {
				sess.Cancel()
			}
		})
		for ev := range sess.Events() {
			c.Post(func() { m.onLoginEvent(c, a, ev, replyTo) })
		}
		<-sess.Finished()
	})
	if !started {
		m.release(a)
		m.forget(c, a)
		c.Reply("untether is stopping; send /login again once it is back.", replyTo)
	}
}

// release ends a's hold on the one login the daemon runs.
func (m *Module) release(a *attempt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running == a {
		m.running = nil
	}
}

// forget drops a as the chat's login, and its button.
func (m *Module) forget(c *chat.Chat, a *attempt) {
	if st := m.state.Get(c); st.cur == a {
		st.cur = nil
	}
	if a.token != "" {
		c.ForgetButton(a.token)
	}
}

// onLoginEvent shows what the login program did.
func (m *Module) onLoginEvent(c *chat.Chat, a *attempt, ev clilogin.Event, replyTo int) {
	switch e := ev.(type) {
	case clilogin.URL:
		a.url = e.URL
		a.token = chat.NewToken()
		c.RegisterButton(a.token)
		a.msg = c.SendMessage(outbox.High, outbox.Content{Text: m.loginText(a, ""), Keyboard: m.loginKeyboard(a)},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
	case clilogin.Done:
		m.finish(c, a, e, replyTo)
	}
}

// loginText is the login message: what to do, and its state (step, ""
// while waiting for the code).
func (m *Module) loginText(a *attempt, step string) string {
	out := "<b>" + loginTitle + "</b>\n"
	if step != "" {
		return out + step
	}
	return out + "1. Open the sign-in page below and sign in.\n2. Send the code it shows you as a <b>reply to this message</b>; it is deleted once used.\n\n" +
		"/cancel stops the login; it ends by itself after " + render.FormatElapsed(a.timeout) + "."
}

// loginKeyboard is the sign-in page and ✖️ Cancel.
func (m *Module) loginKeyboard(a *attempt) render.Keyboard {
	return render.Keyboard{Rows: [][]render.Button{
		{{Text: "🔑 Open the sign-in page", URL: a.url}},
		{{Text: "✖️ Cancel login", CallbackData: chat.CallbackData(btnCancelLogin, a.token)}},
	}}
}

// finish shows the outcome, and then what `claude auth status` says now.
func (m *Module) finish(c *chat.Chat, a *attempt, d clilogin.Done, replyTo int) {
	m.forget(c, a)
	var text string
	switch {
	case d.OK:
		text = "✅ The login program finished: " + render.EscapeHTML(d.Message)
	case a.replaced:
		text = "✖️ Replaced by a newer /login."
	case errors.Is(d.Err, clilogin.ErrCanceled):
		text = "✖️ The login was cancelled."
	case errors.Is(d.Err, clilogin.ErrTimeout):
		text = "⌛ The login timed out after " + render.FormatElapsed(a.timeout) + ". Send /login to try again."
	default:
		text = "❌ The login failed: " + render.EscapeHTML(d.Message) + "\nSend /login to try again."
	}
	if a.msg != nil {
		c.EditMessage(a.msg, outbox.High, outbox.Content{Text: m.loginText(a, text)})
	} else if !a.replaced {
		c.Reply("<b>"+loginTitle+"</b>\n"+text, replyTo)
	}
	if a.replaced || (!d.OK && !a.codeSent) {
		return
	}
	p := c.Project(c.Config())
	w := m.whereOf(p)
	c.Offload(func(ctx context.Context) func() {
		e, ok := m.check(ctx, w, true)
		return func() {
			if !ok {
				return // the bridge stops
			}
			text := "🔑 Claude Code now: " + render.EscapeHTML(authText(e, time.Now(), c.Config().Telegram.Location()))
			if e.err != nil || !e.auth.LoggedIn {
				c.Reply(text, replyTo)
				return
			}
			m.restartIdle(c, text, replyTo)
		}
	})
}

// restartIdle closes the chat's live CLI, when it has nothing to do, so
// the next message starts one that reads the new login (a process reads
// its credentials when it starts), and then replies text with what it
// did: only once the close succeeded does the reply say it was closed.
func (m *Module) restartIdle(c *chat.Chat, text string, replyTo int) {
	sess := c.Session()
	switch {
	case sess == nil:
		c.Reply(text, replyTo)
		return
	case !c.SessionIdle():
		c.Reply(text+"\nThis "+c.ChatWord()+"'s Claude, busy now, was started before the login and keeps the old sign-in until it exits "+
			"(when it has been idle for [claude] idle_timeout, or on /new).", replyTo)
		return
	}
	c.Offload(func(ctx context.Context) func() {
		err := sess.CloseProcess(ctx)
		return func() {
			if err != nil {
				c.Log().Warn().Err(err).Msg("close the CLI started before the login")
				c.Reply(text+"\nThis "+c.ChatWord()+"'s Claude was started before the login and could not be closed, so it keeps the old sign-in until it exits.", replyTo)
				return
			}
			c.Reply(text+"\nThis "+c.ChatWord()+"'s Claude was started before the login, so it was closed: your next message starts it again, signed in, in the same session.", replyTo)
		}
	})
}

// takeCode is the message hook: while the chat's login waits for its
// code, a reply to the login message (or a message shaped like a code,
// codeShaped) is the code; it is typed at the login program and
// deleted. A reply to a login message whose login is over never reaches
// Claude either.
func (m *Module) takeCode(c *chat.Chat, in *chat.Inbound) bool {
	msg := in.Msg
	st := m.state.Get(c)
	a := st.cur
	toLogin := replyToLogin(msg)
	// A reply to an earlier sign-in's message (a second /login replaced
	// it) is a code for a sign-in that is over. While the current one's
	// id is not known yet (its send has not returned, though the user may
	// see it already), a reply is taken as to it.
	earlier := toLogin && a != nil && a.msg != nil && a.msg.ID() != 0 && int(a.msg.ID()) != msg.ReplyToMessage.ID
	if earlier || a == nil || a.msg == nil || a.sess == nil || a.codeSent {
		if !toLogin {
			return false
		}
		c.DeleteMessage(msg.ID)
		switch {
		case earlier || a == nil:
			c.Reply("🔑 That sign-in is over, so the code was not used (and its message is deleted). Send /login to start again.", 0)
		case a.codeSent:
			c.Reply("🔑 A code was sent to this sign-in already, so this one was not used (and its message is deleted). Wait for the result, or /cancel.", 0)
		default:
			c.Reply("🔑 This sign-in has not shown its page yet, so the code was not used (and its message is deleted). Send the code once the page's button is here.", 0)
		}
		return true
	}
	text := strings.TrimSpace(msg.Text)
	if !toLogin && (msg.ReplyToMessage != nil || !codeShaped(text)) {
		return false
	}
	err := a.sess.SubmitCode(text)
	c.DeleteMessage(msg.ID)
	if err != nil {
		c.Reply("⚠️ That code was not used: "+render.EscapeHTML(err.Error())+". Send the code as a reply to the sign-in message.", 0)
		return true
	}
	a.codeSent = true
	c.EditMessage(a.msg, outbox.High, outbox.Content{Text: m.loginText(a, "⏳ Code received (its message is deleted); signing in…"),
		Keyboard: render.Keyboard{Rows: [][]render.Button{{{Text: "✖️ Cancel login", CallbackData: chat.CallbackData(btnCancelLogin, a.token)}}}}})
	return true
}

// codeShaped reports whether text looks like the code the sign-in page
// shows ("code#state": one long word with a '#' inside), so that one sent
// without replying is taken too.
func codeShaped(text string) bool {
	code, state, ok := strings.Cut(text, "#")
	return ok && len(text) >= 20 && code != "" && state != "" && !strings.ContainsAny(text, " \n\t")
}

// replyToLogin reports whether m replies to a login message of the bot.
func replyToLogin(m *models.Message) bool {
	r := m.ReplyToMessage
	return r != nil && r.From != nil && r.From.IsBot && strings.HasPrefix(r.Text, loginTitle)
}

// cancel ends the chat's login (/cancel, ✖️ Cancel); false when none runs.
func (m *Module) cancel(c *chat.Chat, replyTo int) bool {
	a := m.state.Get(c).cur
	if a == nil {
		return false
	}
	a.end()
	if replyTo != 0 {
		c.Reply("✖️ Cancelling the login…", replyTo)
	}
	return true
}

// goLogin runs fn, one login's relay, as the module's work: Start waits
// for it when the bridge stops (the login ends with Start's context). A
// login waits for a person for minutes, so it is not the chats' offloaded
// work, which a restart waits for only briefly. It reports false, running
// nothing, once the bridge stops.
func (m *Module) goLogin(fn func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runCtx == nil {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
	return true
}

// loginTimeout is login_timeout; a zero (a config built in code) would
// end every login at once, so it means the relay's default.
func loginTimeout(cfg *config.Config) time.Duration {
	if d := cfg.Claude.LoginTimeout.Std(); d > 0 {
		return d
	}
	return clilogin.DefaultTimeout
}

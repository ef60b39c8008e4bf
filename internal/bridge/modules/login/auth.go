package login

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// What `claude auth status` says is kept for authFresh: it starts the CLI
// (about a CPU-second), and with a claude.ai login it reaches the network.
// /status shows what is kept, saying how old it is, and asks again, off
// the actor, once it is stale; a login, and a turn refused for the login,
// ask again at once.
const authFresh = 10 * time.Minute

// expiryWarnWithin is how close the end of a claude.ai sign-in must be for
// the answers to warn about it (as `untether check` does).
const expiryWarnWithin = 24 * time.Hour

// where is a CLI as `auth status` and `auth login` run it: its binary and
// its whole environment (HOME is where its login lives).
type where struct {
	binary string
	env    []string
}

// key tells CLIs apart in the cache: binary and environment.
func (w where) key() string { return w.binary + "\x00" + strings.Join(w.env, "\x00") }

// whereOf is where the CLI of project p runs here, in the environment the
// chats' CLIs get (the daemon's allow-listed variables, p's env, p's home).
func (m *Module) whereOf(p config.ProjectSettings) where {
	extra := maps.Clone(p.Env)
	if extra == nil {
		extra = map[string]string{}
	}
	if p.Home != "" {
		extra["HOME"] = p.Home
	}
	return where{binary: p.Binary, env: runner.BuildEnv(m.host.InheritEnv(), extra)}
}

// authEntry is one CLI's last answer.
type authEntry struct {
	auth runner.Auth
	err  error
	at   time.Time
	// asking is closed when the check on its way ends; nil when none is.
	asking chan struct{}
}

// authCache is the last answer of each CLI, shared by every chat.
type authCache struct {
	mu      sync.Mutex
	entries map[string]*authEntry
}

// get is w's last answer, and whether it is worth asking again (none yet,
// or stale, and no one asking).
func (ac *authCache) get(w where, now time.Time) (authEntry, bool) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	e := ac.entries[w.key()]
	if e == nil {
		return authEntry{}, true
	}
	return *e, e.asking == nil && now.Sub(e.at) >= authFresh
}

// begin claims asking w (mine), or returns the check on its way.
func (ac *authCache) begin(w where) (asking chan struct{}, mine bool) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.entries == nil {
		ac.entries = map[string]*authEntry{}
	}
	e := ac.entries[w.key()]
	if e == nil {
		e = &authEntry{}
		ac.entries[w.key()] = e
	}
	if e.asking != nil {
		return e.asking, false
	}
	e.asking = make(chan struct{})
	return e.asking, true
}

// put stores w's answer, ending the check on its way.
func (ac *authCache) put(w where, a runner.Auth, err error, at time.Time) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	e := ac.entries[w.key()]
	close(e.asking)
	*e = authEntry{auth: a, err: err, at: at}
}

// check asks w's CLI (`claude auth status`) and stores the answer; it
// blocks, so it runs off the actor. With another check of w on its way it
// returns false at once, or, fresh (the login just changed), waits for it
// and asks again. It reports false too when ctx ends first.
func (m *Module) check(ctx context.Context, w where, fresh bool) (authEntry, bool) {
	for {
		asking, mine := m.auth.begin(w)
		if mine {
			break
		}
		if !fresh {
			return authEntry{}, false
		}
		select {
		case <-asking:
		case <-ctx.Done():
			return authEntry{}, false
		}
	}
	a, err := runner.AuthStatus(ctx, w.binary, w.env...)
	now := time.Now()
	m.auth.put(w, a, err, now)
	if err != nil {
		m.log.Warn().Err(err).Msg("ask the CLI whether it is logged in")
	}
	return authEntry{auth: a, err: err, at: now}, true
}

// refresh asks again, off the actor, when the chat's CLI's answer is
// missing or stale (force: whatever its age).
func (m *Module) refresh(c *chat.Chat, p config.ProjectSettings, force bool) {
	if p.Remote() {
		return
	}
	w := m.whereOf(p)
	if _, stale := m.auth.get(w, time.Now()); !stale && !force {
		return
	}
	c.Offload(func(ctx context.Context) func() {
		m.check(ctx, w, force)
		return nil
	})
}

// statusText is /status's login line for the chat's project.
func (m *Module) statusText(c *chat.Chat) string {
	p := c.Project(c.Config())
	if p.Remote() {
		return "not checked: Claude runs on " + p.Host
	}
	now := time.Now()
	e, stale := m.auth.get(m.whereOf(p), now)
	if stale {
		m.refresh(c, p, false)
	}
	if e.at.IsZero() {
		return "being checked; /status again shows it"
	}
	out := authText(e, now, c.Config().Telegram.Location())
	if age := now.Sub(e.at); age >= time.Minute {
		out += " (checked " + render.FormatElapsed(age.Round(time.Minute)) + " ago)"
	}
	return out
}

// authText says whether and how the CLI is logged in.
func authText(e authEntry, now time.Time, loc *time.Location) string {
	a := e.auth
	switch {
	case e.err != nil:
		return "unknown: " + e.err.Error()
	case !a.LoggedIn:
		return "❌ not logged in; /login in a private chat with the bot signs Claude Code in"
	case a.Expired(now):
		return "⚠️ " + a.Describe() + ", but its sign-in may have ended (by " + render.FormatWhen(a.ExpiresAt.In(loc), now) + "); /login signs in again"
	case a.ExpiresWithin(now, expiryWarnWithin):
		return "⚠️ " + a.Describe() + ", but its sign-in ends by " + render.FormatUntil(a.ExpiresAt.In(loc), now) + "; /login signs in again"
	case !a.ExpiresAt.IsZero():
		return a.Describe() + "; its sign-in ends by " + render.FormatWhen(a.ExpiresAt.In(loc), now)
	}
	return a.Describe()
}

// expiryNote is the line above an answer's footer when the login of the
// chat's CLI ends within a day (or may have ended), "" otherwise.
func (m *Module) expiryNote(c *chat.Chat) string {
	p := c.Project(c.Config())
	if p.Remote() {
		return ""
	}
	now := time.Now()
	e, stale := m.auth.get(m.whereOf(p), now)
	if stale {
		m.refresh(c, p, false)
	}
	a := e.auth
	if e.err != nil || !a.LoggedIn || !a.ExpiresWithin(now, expiryWarnWithin) {
		return ""
	}
	where := "/login signs in again"
	if c.Group() {
		where = "/login in a private chat with the bot signs in again"
	}
	when := render.FormatUntil(a.ExpiresAt.In(c.Config().Telegram.Location()), now)
	if a.Expired(now) {
		return "🔑 Claude Code's sign-in may have ended (by " + when + "); " + where + "."
	}
	return "🔑 Claude Code's sign-in ends by " + when + "; " + where + "."
}

// loginFailure reports whether a turn failed because the CLI is not
// logged in or its login was refused: "Not logged in · Please run /login"
// is what CLI 2.1.328 answers without credentials (seen); a refused key or
// an expired token comes back as a 401 or an authentication error whose
// text asks for /login.
func loginFailure(tc runner.TurnCompleted) bool {
	if tc.OK {
		return false
	}
	text := strings.ToLower(tc.Answer + " " + strings.Join(tc.Errors, " "))
	return tc.APIErrorStatus == 401 || slices.Contains([]string{"authentication_error", "authentication_failed"}, tc.APIError) ||
		strings.Contains(text, "not logged in") || strings.Contains(text, "please run /login") || strings.Contains(text, "oauth token has expired")
}

// loginHelps reports whether a login from the chat can fix the chat's
// CLI: not when the last answer says it uses a key or a token from its
// environment, or a third party, which a stored login does not replace.
func (m *Module) loginHelps(c *chat.Chat) bool {
	p := c.Project(c.Config())
	if p.Remote() {
		return false
	}
	e, _ := m.auth.get(m.whereOf(p), time.Now())
	if e.at.IsZero() || e.err != nil || !e.auth.LoggedIn {
		return true
	}
	return e.auth.Method == runner.AuthClaudeAI
}

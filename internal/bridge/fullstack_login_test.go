package bridge_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
)

// The OAuth exchange of `claude auth login` cannot run here (the CLI
// cannot be pointed at a local fake), so these tests give the bridge a
// stand-in for the claude binary: `auth login` runs fakelogin (a program
// in this repository that prints a sign-in URL and reads a code, as the
// CLI does) and, when it succeeds, stands for the stored login by giving
// the real CLI an API key from then on; everything else, `auth status`
// included, is the real CLI.

// goodCode is the code fakelogin accepts: shaped like the CLI's
// "code#state".
const goodCode = "Zq3aTESTcodeFROMtheCALLBACKpage0123#st4te-9f8e7d"

// loginCLI writes the stand-in and returns its path and the file whose
// presence means "logged in".
func loginCLI(t *testing.T, real string) (binary, loggedIn string) {
	t.Helper()
	dir := realDir(t)
	fake := filepath.Join(dir, "fakelogin")
	out, err := exec.Command("go", "build", "-o", fake, "../login/fakelogin").CombinedOutput()
	require.NoError(t, err, "build fakelogin: %s", out)
	loggedIn = filepath.Join(dir, "logged-in")
	script := "#!/bin/sh\n" +
		"if [ -f " + shq(loggedIn) + " ]; then export ANTHROPIC_API_KEY=test; fi\n" +
		"if [ \"$1\" = auth ] && [ \"$2\" = login ]; then\n" +
		"  FAKELOGIN_CODE=" + shq(goodCode) + " " + shq(fake) + " -style login\n" +
		"  rc=$?\n" +
		"  if [ $rc = 0 ]; then : > " + shq(loggedIn) + "; fi\n" +
		"  exit $rc\n" +
		"fi\n" +
		"exec " + shq(real) + " \"$@\"\n"
	binary = filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(binary, []byte(script), 0o755))
	return binary, loggedIn
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// withLoggedOutCLI runs the chats' CLI through loginCLI, with no
// credentials until a login succeeds.
func withLoggedOutCLI(mutate ...func(*config.Config)) rigOption {
	return func(r *rig) {
		r.claude = claudetest.New(r.t, script())
		bin, _ := loginCLI(r.t, r.claude.Binary)
		prev := r.mutate
		r.mutate = func(c *config.Config) {
			if prev != nil {
				prev(c)
			}
			c.Claude.Binary = bin
			c.Claude.Env = maps.Clone(r.claude.Vars)
			delete(c.Claude.Env, "ANTHROPIC_API_KEY")
			for _, f := range mutate {
				f(c)
			}
		}
	}
}

// loginMessage waits for the bot's sign-in message replying to to.
func (r *rig) loginMessage(chat telegramtest.ChatID, to telegramtest.MessageID) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "the sign-in message", func(m telegramtest.Message) bool {
		return m.ReplyTo == to && strings.HasPrefix(m.Text, "🔑 Sign in to Claude Code") && urlButton(m) != ""
	})
}

// urlButton is the URL of a message's link button, "" if none.
func urlButton(m telegramtest.Message) string {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.URL != "" {
				return b.URL
			}
		}
	}
	return ""
}

// edited waits for message id to show want.
func (r *rig) edited(chat telegramtest.ChatID, id telegramtest.MessageID, want string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, want, func(m telegramtest.Message) bool { return m.ID == id && strings.Contains(m.Text, want) })
}

// statusShows sends /status until its answer contains want (the CLI's
// login is asked off the actor, so the first /status may still wait for it).
func (r *rig) statusShows(chat telegramtest.ChatID, want string) telegramtest.Message {
	r.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		st := r.say(chat, alice, "/status")
		m := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
		if strings.Contains(m.Text, want) || time.Now().After(deadline) {
			require.Contains(r.t, m.Text, want)
			return m
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestLoginFromTheChat: the real CLI without credentials fails the turn
// ("Not logged in"); the answer says so and offers 🔑 Log in, /status says
// it is not logged in (the real `claude auth status`). The button starts
// the login: the sign-in page comes as a button, the code sent back as a
// reply is typed at the login program and its message deleted, the
// outcome and the CLI's new status follow, and the next message works.
// The code appears in no log line, no bot message and no API request.
func TestLoginFromTheChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withLoggedOutCLI())

	in := r.say(chat, alice, "hello")
	failed := r.waitBot(chat, "the failed answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Not logged in")
	})
	assert.Contains(t, failed.Text, "🔑 Authentication failed")
	assert.Contains(t, failed.Text, "🔑 Log in below (or /login) signs Claude Code in from here.")
	assert.NotContains(t, failed.Text, "effort", "a turn that made no model call ran with no effort")
	logIn := buttonData(failed, "🔑 Log in")
	require.NotEmpty(t, logIn)
	assert.Empty(t, r.claude.API.ModelCalls(), "the CLI refused before any request")
	r.statusShows(chat, "Login: ❌ not logged in")

	r.tg.UserPresses(chat, failed.ID, logIn)
	lm := r.loginMessage(chat, failed.ID)
	assert.True(t, strings.HasPrefix(urlButton(lm), "https://claude.com/cai/oauth/authorize?code=true"), urlButton(lm))
	assert.Contains(t, lm.Text, "Send the code it shows you as a reply to this message")
	assert.NotEmpty(t, buttonData(lm, "✖️ Cancel login"))

	code := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, goodCode, telegramtest.ReplyingTo(lm.ID))
	r.edited(chat, lm.ID, "✅ The login program finished: Login successful.")
	r.waitBot(chat, "the new status", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "🔑 Claude Code now: an API key (ANTHROPIC_API_KEY)\n"+
			"This chat's Claude was started before the login, so it was closed: your next message starts it again, signed in, in the same session.")
	})
	gone, ok := r.tg.Message(chat, code.ID)
	require.True(t, ok)
	assert.True(t, gone.Deleted, "the code's message is deleted")

	sid := r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)})
	r.ask(chat, "hello again")
	assert.Equal(t, sid, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}), "the same session, resumed")
	r.statusShows(chat, "Login: an API key (ANTHROPIC_API_KEY)")
	r.assertCodeNowhere(chat, goodCode)
}

// assertCodeNowhere checks that no log line, no bot message and no API
// request carries the code or its parts.
func (r *rig) assertCodeNowhere(chat telegramtest.ChatID, code string) {
	r.t.Helper()
	parts := append([]string{code}, strings.Split(code, "#")...)
	for _, p := range parts {
		assert.NotContains(r.t, r.logs.String(), p, "a log line")
		for _, m := range r.tg.Messages(chat) {
			if m.FromBot {
				assert.NotContains(r.t, m.Text, p, "a bot message")
			}
		}
		for _, req := range r.claude.API.Requests() {
			assert.NotContains(r.t, string(req.Body), p, "an API request")
		}
	}
}

// TestLoginEnds: a second /login replaces the first, /cancel and ✖️
// Cancel stop one, login_timeout ends one, a wrong code fails it; a code
// sent to a login that is over is deleted and never reaches Claude; a
// group is refused, and so is a second chat while one login runs.
func TestLoginEnds(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withGroup(config.GroupTriggerAll), withLoggedOutCLI(func(c *config.Config) { c.Claude.LoginTimeout = config.Duration(3 * time.Second) }))
	r.addTeam()
	user := telegramtest.User{ID: alice, FirstName: "Alice"}

	first := r.say(chat, alice, "/login")
	lm1 := r.loginMessage(chat, first.ID)
	other := r.addPrivateChat(bob, "Bob")
	busy := r.tg.UserSends(other, telegramtest.User{ID: bob, FirstName: "Bob"}, "/login")
	r.waitBot(other, "refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == busy.ID && strings.Contains(m.Text, "A login started from another chat is running")
	})
	second := r.say(chat, alice, "/login")
	r.edited(chat, lm1.ID, "✖️ Replaced by a newer /login.")
	lm2 := r.loginMessage(chat, second.ID)
	overs := func() int {
		n := 0
		for _, m := range r.tg.Snapshot().BotMessages(chat) {
			if strings.Contains(m.Text, "That sign-in is over, so the code was not used") {
				n++
			}
		}
		return n
	}
	// A code in reply to the replaced login is not typed at the new one,
	// which the cancel below then finds still waiting.
	stale := r.tg.UserSends(chat, user, goodCode, telegramtest.ReplyingTo(lm1.ID))
	require.Eventually(t, func() bool { return overs() == 1 }, wait, 20*time.Millisecond, "the replaced sign-in is over")

	c := r.say(chat, alice, "/cancel")
	r.waitBot(chat, "cancelling", func(m telegramtest.Message) bool {
		return m.ReplyTo == c.ID && strings.Contains(m.Text, "Cancelling the login")
	})
	r.edited(chat, lm2.ID, "✖️ The login was cancelled.")

	third := r.say(chat, alice, "/login")
	lm3 := r.loginMessage(chat, third.ID)
	r.tg.UserPresses(chat, lm3.ID, buttonData(lm3, "✖️ Cancel login"))
	r.edited(chat, lm3.ID, "✖️ The login was cancelled.")

	fourth := r.say(chat, alice, "/login")
	lm4 := r.loginMessage(chat, fourth.ID)
	r.edited(chat, lm4.ID, "⌛ The login timed out after 3s. Send /login to try again.")

	fifth := r.say(chat, alice, "/login")
	lm5 := r.loginMessage(chat, fifth.ID)
	wrong := r.tg.UserSends(chat, user, "wrong-code#wrong-state", telegramtest.ReplyingTo(lm5.ID))
	r.edited(chat, lm5.ID, "❌ The login failed: Couldn't log in: Invalid authorization code")
	r.waitBot(chat, "the status after", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "🔑 Claude Code now: ❌ not logged in")
	})

	late := r.tg.UserSends(chat, user, goodCode, telegramtest.ReplyingTo(lm4.ID))
	require.Eventually(t, func() bool { return overs() == 2 }, wait, 20*time.Millisecond, "the timed-out sign-in is over")
	for _, id := range []telegramtest.MessageID{stale.ID, wrong.ID, late.ID} {
		m, _ := r.tg.Message(chat, id)
		assert.True(t, m.Deleted, "message %d deleted", id)
	}
	r.assertCodeNowhere(chat, goodCode)
	assert.Empty(t, r.claude.API.Requests(), "no code reached Claude")

	g := r.tg.UserSends(team, user, "/login")
	refusal := r.waitBot(team, "group refusal", func(m telegramtest.Message) bool { return m.ReplyTo == g.ID })
	assert.Contains(t, refusal.Text, "/login works only in a private chat with the bot")
	assert.Empty(t, urlButton(refusal))
	mine := r.tg.UserSends(other, telegramtest.User{ID: bob, FirstName: "Bob"}, "/login")
	r.loginMessage(other, mine.ID) // free again once the logins above ended
}

// withSignInEnding gives the chats a CLI whose `claude auth status` is the
// real CLI's answer for a stored claude.ai login (made up, ending at end,
// run without any network: with such a login the command looks up
// api.anthropic.com), while its turns use the fake API's key as usual.
func withSignInEnding(end time.Time) rigOption {
	return func(r *rig) {
		r.claude = claudetest.New(r.t, script())
		home := realDir(r.t)
		require.NoError(r.t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
		creds := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-fake-access","refreshToken":"sk-ant-ort01-fake-refresh",`+
			`"expiresAt":%d,"refreshTokenExpiresAt":%d,"scopes":["user:inference","user:profile"],"subscriptionType":"max","rateLimitTier":"default_claude_max_5x"}}`,
			end.Add(-time.Hour).UnixMilli(), end.UnixMilli())
		require.NoError(r.t, os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(creds), 0o600))
		offline := claudetest.NoNetwork(r.t, r.claude.Binary)
		bin := filepath.Join(realDir(r.t), "claude")
		require.NoError(r.t, os.WriteFile(bin, []byte("#!/bin/sh\n"+
			"if [ \"$1\" = auth ] && [ \"$2\" = status ]; then\n"+
			"  exec env -u ANTHROPIC_API_KEY HOME="+shq(home)+" "+shq(offline)+" \"$@\"\n"+
			"fi\n"+
			"exec "+shq(r.claude.Binary)+" \"$@\"\n"), 0o755))
		r.mutate = func(c *config.Config) { c.Claude.Binary = bin }
	}
}

// TestSignInEndingSoon: a claude.ai sign-in that ends within a day (the
// real `claude auth status` says when) is named in /status and warned
// about above every answer's footer, with what to do.
func TestSignInEndingSoon(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	end := time.Now().Add(12 * time.Hour).Truncate(time.Minute)
	// "15:04 UTC", or "tomorrow 15:04 UTC" when the end falls on the next
	// day (a run after noon UTC).
	when := render.FormatWhen(end.UTC(), time.Now())
	r := newRig(t, withSignInEnding(end))
	r.statusShows(chat, "Login: ⚠️ a Claude Max subscription (claude.ai login), but its sign-in ends by "+when)
	a := r.ask(chat, "hello")
	assert.Regexp(t, `🔑 Claude Code's sign-in ends by `+regexp.QuoteMeta(when)+` \(in 1[12]h\d\dm\); /login signs in again\.`, a.Text)
}

// TestLoginEndsWithARestart: a restart ends a login waiting for its code;
// the code sent afterwards to its message is deleted, said to be unused,
// and never reaches Claude.
func TestLoginEndsWithARestart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withLoggedOutCLI())
	in := r.say(chat, alice, "/login")
	lm := r.loginMessage(chat, in.ID)
	r.stop()
	r.start()
	late := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, goodCode, telegramtest.ReplyingTo(lm.ID))
	r.waitBot(chat, "over", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "That sign-in is over, so the code was not used")
	})
	m, _ := r.tg.Message(chat, late.ID)
	assert.True(t, m.Deleted)
	r.assertCodeNowhere(chat, goodCode)
	assert.Empty(t, r.claude.API.Requests())
}

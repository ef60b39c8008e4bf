package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// TestLimitRetryGoesBackToItsProject: a prompt a limit rejected in one
// project is sent again there, in its own session, after the chat moved
// to another project meanwhile; the chat is switched back and told. A
// retry whose project the config dropped meanwhile is not sent anywhere:
// the chat is told, and the retry is dropped.
func TestLimitRetryGoesBackToItsProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	beta := realDir(t)
	clock := timeshift.New(time.Now())
	reset := time.Now().Add(time.Hour)
	r := newRig(t, func(r *rig) {
		r.clock = clock
		r.claude = claudetest.New(r.t, limitScript(map[string]time.Time{"LIMITED": reset, "GONE": reset.Add(time.Hour)}),
			claudetest.WithOAuthToken("sk-ant-oat01-fake"))
	}, withProjects(map[string]config.Project{"beta": {Path: beta}}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Claude.RetryAfterLimit = config.RetryAuto
	}))
	alpha := r.claude.Workdir

	r.ask(chat, "REMEMBER pear in default")
	in := r.say(chat, alice, "LIMITED in default")
	r.waitBot(chat, "the limit's notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "will be sent again")
	})
	r.command(chat, "/project beta", "starts a new session")
	gone := r.say(chat, alice, "GONE in beta")
	goneNotice := r.waitBot(chat, "beta's limit notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == gone.ID && strings.Contains(m.Text, "will be sent again")
	})

	clock.Advance(time.Hour)
	back := r.waitBot(chat, "the switch back", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "goes again in") })
	assert.Contains(t, back.Text, "⏰ “LIMITED in default” goes again in default, where the limit stopped it, so this chat works there now: "+alpha)
	r.finalAnswer(chat, in.ID, "echo: LIMITED in default")
	var again []bool
	for _, c := range r.claude.API.ModelCalls() {
		if c.LastPrompt() == "LIMITED in default" {
			again = append(again, ranIn(c, alpha) && c.AnyUserContains("REMEMBER pear"))
		}
	}
	assert.Equal(t, []bool{true, true}, again, "both tries ran in default's directory, in its session")
	rec, err := r.store.GetChat(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, "default", rec.Project, "the chat works in default again")

	cfg := *r.b.Config()
	cfg.Projects = map[string]config.Project{}
	r.b.Reload(&cfg)
	clock.Advance(time.Hour)
	r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == gone.ID && strings.Contains(m.Text,
			"“GONE in beta” was not sent again after the limit: its project beta is no longer in untether's configuration.")
	})
	r.waitBot(chat, "the notice says dropped", func(m telegramtest.Message) bool {
		return m.ID == goneNotice.ID && strings.Contains(m.Text, "will not be sent again")
	})
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "GONE in beta"), "never sent anywhere else")
	tok := strings.TrimPrefix(buttonData(goneNotice, "Drop"), "Z:")
	got, err := r.store.GetRetry(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, state.RetryDropped, got.State)
}

// TestLimitRetryWaitsForForwardsBeingCollected: forwards still being
// collected when a retry for another project fires go to Claude first, in
// the project they were sent in; the retry waits for their turn, then
// switches the chat back and goes out there.
func TestLimitRetryWaitsForForwardsBeingCollected(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	beta := realDir(t)
	clock := timeshift.New(time.Now())
	reset := time.Now().Add(time.Hour)
	r := newRig(t, func(r *rig) {
		r.clock = clock
		r.claude = claudetest.New(r.t, limitScript(map[string]time.Time{"LIMITED": reset}), claudetest.WithOAuthToken("sk-ant-oat01-fake"))
	}, withProjects(map[string]config.Project{"beta": {Path: beta}}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Telegram.ForwardWait = config.Duration(time.Minute) // still collecting when the retry fires
		c.Claude.RetryAfterLimit = config.RetryAuto
	}))
	alpha := r.claude.Workdir

	in := r.say(chat, alice, "LIMITED in default")
	r.waitBot(chat, "the limit's notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "will be sent again")
	})
	r.command(chat, "/project beta", "starts a new session")
	fwd := r.tg.UserSends(chat, aliceUser, "FWDMARK the build is red", telegramtest.Forwarded(telegramtest.ForwardOrigin{
		Type: "user", Date: time.Date(2025, 5, 6, 7, 8, 0, 0, time.UTC), SenderUser: telegramtest.User{ID: 77, FirstName: "Bob"}}))
	r.command(chat, "/status", "Project: beta") // the chat took the forward in before this
	calls := len(r.claude.API.ModelCalls())

	clock.Advance(time.Hour)
	r.finalAnswer(chat, fwd.ID, "forwarded 1 message")
	r.waitBot(chat, "the switch back", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "goes again in default") })
	r.finalAnswer(chat, in.ID, "echo: LIMITED in default")
	after := r.claude.API.ModelCalls()[calls:]
	require.Len(t, after, 2)
	assert.True(t, after[0].AnyUserContains("FWDMARK"), "the forwards went first")
	assert.True(t, ranIn(after[0], beta), "in the project they were sent in")
	assert.Equal(t, "LIMITED in default", after[1].LastPrompt())
	assert.True(t, ranIn(after[1], alpha), "then the retry, where it was rejected")
}

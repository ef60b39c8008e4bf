package bridge_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// A project whose allowed_chat_ids do not list a group is no way in for
// it: /project neither lists nor takes it, /topic does not bind a topic to
// it, and the group's messages go on running where they did. Alice's
// private chat, which it lists, works there.
func TestProjectClosedToAChatIsNoWayIn(t *testing.T) {
	const forum = telegramtest.ChatID(-1002500)
	secret, open := realDir(t), realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{
		"secret": {Path: secret, AllowedChatIDs: []int64{int64(alice)}},
		"open":   {Path: open},
	}, func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(forum)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
	}))
	r.tg.AddChat(telegramtest.Chat{ID: forum, Type: telegramtest.Supergroup, Title: "work", IsForum: true, BotCanManageTopics: true})

	menu := r.command(forum, "/project", "Choose a project")
	assert.NotContains(t, menu.Text, "secret", "not listed")
	assert.Empty(t, buttonData(menu, "secret"), "no button for it")
	assert.NotEmpty(t, buttonData(menu, "open"))

	r.command(forum, "/project secret", "Project secret is not open to this chat (projects.secret.allowed_chat_ids)")
	r.ask(forum, "where do I run?")
	assert.True(t, ranIn(r.callFor("where do I run?"), r.claude.Workdir), "still in the default project")
	assert.False(t, ranIn(r.callFor("where do I run?"), secret))

	r.command(forum, "/topic secret", "Project secret is not open to this chat")
	assert.Empty(t, r.tg.Topics(), "no topic made for it")
	r.command(forum, "/topic open", "Made the topic open")

	private := telegramtest.ChatID(alice)
	r.command(private, "/project secret", "This chat works in secret")
	r.ask(private, "in the secret project")
	assert.True(t, ranIn(r.callFor("in the secret project"), secret))
}

// A reload that closes a project to a chat moves the chat out: its stored
// choice is dropped (and it is told) the next time it writes, a Resume of
// the session it had there is refused, and a prompt a limit rejected
// there is not sent again when the limit resets.
func TestClosingAProjectMovesItsChatsOut(t *testing.T) {
	private := telegramtest.ChatID(alice)
	secret := realDir(t)
	clock := timeshift.New(time.Now())
	reset := time.Now().Add(time.Hour)
	r := newRig(t, func(r *rig) {
		r.clock = clock
		r.claude = claudetest.New(r.t, limitScript(map[string]time.Time{"LIMITED": reset}), claudetest.WithOAuthToken("sk-ant-oat01-fake"))
	}, withProjects(map[string]config.Project{"secret": {Path: secret, AllowedChatIDs: []int64{int64(alice)}}}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Claude.RetryAfterLimit = config.RetryAuto
	}))
	r.command(private, "/project secret", "This chat works in secret")
	r.ask(private, "first in secret")
	limited := r.say(private, alice, "LIMITED in secret")
	notice := r.waitBot(private, "the limit's notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == limited.ID && strings.Contains(m.Text, "will be sent again at")
	})

	require.Eventually(t, func() bool { // the notice is edited through its id on disk
		got, err := r.store.GetRetry(context.Background(), strings.TrimPrefix(buttonData(notice, "Drop"), "Z:"))
		return err == nil && got.MessageID != 0
	}, wait, 10*time.Millisecond)

	cfg := *r.b.Config()
	cfg.Projects = maps.Clone(cfg.Projects)
	closed := cfg.Projects["secret"]
	closed.AllowedChatIDs = []int64{int64(bob)}
	cfg.Projects["secret"] = closed
	r.b.Reload(&cfg)

	clock.Advance(2 * time.Hour)
	r.waitBot(private, "the retry is dropped", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "“LIMITED in secret” was not sent again after the limit: its project secret is not open to this chat")
	})
	r.waitBot(private, "its notice says so", func(m telegramtest.Message) bool { return m.ID == notice.ID && len(m.Keyboard) == 0 })
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "LIMITED in secret"), "rejected once, never sent again")

	r.ask(private, "where now?")
	r.waitBot(private, "told", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The project secret is no longer open to this chat (projects.secret.allowed_chat_ids), so this chat works in default now")
	})
	assert.True(t, ranIn(r.callFor("where now?"), r.claude.Workdir))
	assert.False(t, ranIn(r.callFor("where now?"), secret))

	list := r.command(private, "/sessions", "Sessions")
	var resume string
	for _, line := range strings.Split(list.Text, "\n") {
		if strings.Contains(line, "first in secret") {
			resume = buttonData(list, "▶️ "+strings.SplitN(strings.TrimSpace(line), ".", 2)[0])
		}
	}
	require.NotEmpty(t, resume, "the session it had there is listed: %s", list.Text)
	r.tg.UserPresses(private, list.ID, resume)
	r.waitBot(private, "Resume refused", func(m telegramtest.Message) bool {
		return m.ID == list.ID && strings.Contains(m.Text, "Project secret is not open to this chat")
	})
	r.ask(private, "after the refusal")
	assert.False(t, ranIn(r.callFor("after the refusal"), secret))
}

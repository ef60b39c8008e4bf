package bridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

const team = telegramtest.ChatID(-1002000)

func withGroup(trigger config.GroupTrigger) rigOption {
	return withConfig(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(team)}
		c.Telegram.GroupTrigger = trigger
	})
}

func (r *rig) addTeam() {
	r.tg.AddChat(telegramtest.Chat{ID: team, Type: telegramtest.Supergroup, Title: "team"})
}

// mentioning sends text that starts with "@untether_bot ", with the
// mention entity Telegram adds.
func mentioning(text string) (string, telegramtest.UserOption) {
	full := "@untether_bot " + text
	return full, telegramtest.WithEntities(telegramtest.Entity{Type: "mention", Offset: 0, Length: len(utf16.Encode([]rune("@untether_bot")))})
}

// modelSaw reports whether any model call carried text.
func (r *rig) modelSaw(text string) bool {
	for _, c := range r.claude.API.ModelCalls() {
		if c.AnyUserContains(text) {
			return true
		}
	}
	return false
}

// sync sends a private message and waits for its answer: updates are
// routed in order, so everything sent before has been handled (or dropped).
func (r *rig) sync(text string) {
	r.t.Helper()
	in := r.say(telegramtest.ChatID(alice), alice, text)
	r.finalAnswer(telegramtest.ChatID(alice), in.ID, "echo: "+text)
}

func TestGroupNotListedIsRefused(t *testing.T) {
	r := newRig(t)
	r.addTeam()
	for _, text := range []string{"GROUPSECRET hello", "/status", "/new"} {
		r.say(team, alice, text)
	}
	full, mention := mentioning("GROUPSECRET please")
	r.tg.UserSends(team, telegramtest.User{ID: alice, FirstName: "Alice"}, full, mention)
	r.sync("after the group")

	assert.Empty(t, r.tg.Snapshot().BotMessages(team), "no reply in a group not listed")
	assert.False(t, r.modelSaw("GROUPSECRET"))
	_, err := r.store.GetChat(context.Background(), state.ChatKey{Chat: state.ChatID(team)})
	assert.True(t, errors.Is(err, state.ErrNotFound), "no chat record: %v", err)
	deferred, err := r.store.DeferredUpdates(context.Background())
	require.NoError(t, err)
	assert.Empty(t, deferred)
	assert.Equal(t, 1, strings.Count(r.logs.String(), "ignoring a group not listed"), "logged once a minute, not per message")
}

func TestGroupMentionTrigger(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerMention))
	r.addTeam()
	aliceU := telegramtest.User{ID: alice, FirstName: "Alice"}

	chatter := r.say(team, alice, "CHATTER about lunch")
	full, mention := mentioning("hello bot")
	addressed := r.tg.UserSends(team, aliceU, full, mention)
	answer := r.finalAnswer(team, addressed.ID, "hello bot")

	reply := r.tg.UserSends(team, aliceU, "and a follow-up", telegramtest.ReplyingTo(answer.ID))
	r.finalAnswer(team, reply.ID, "and a follow-up") // after the quote of the answer it replies to (replies.go)

	st := r.say(team, alice, "/status")
	r.waitBot(team, "status", func(m telegramtest.Message) bool {
		return m.ReplyTo == st.ID && strings.Contains(m.Text, "Session status")
	})
	st2 := r.say(team, alice, "/status@untether_bot")
	r.waitBot(team, "status", func(m telegramtest.Message) bool {
		return m.ReplyTo == st2.ID && strings.Contains(m.Text, "Session status")
	})
	other := r.say(team, alice, "/status@otherbot")

	// A stranger addressing the bot is ignored without a reply.
	sfull, smention := mentioning("STRANGER wants in")
	stranger := r.tg.UserSends(team, telegramtest.User{ID: mallory, FirstName: "Mallory"}, sfull, smention)
	r.sync("after the group")

	for _, m := range r.tg.Snapshot().BotMessages(team) {
		assert.NotEqual(t, chatter.ID, m.ReplyTo, "chatter not addressed to the bot")
		assert.NotEqual(t, other.ID, m.ReplyTo, "a command for another bot")
		assert.NotEqual(t, stranger.ID, m.ReplyTo, "a stranger")
	}
	assert.False(t, r.modelSaw("CHATTER"))
	assert.False(t, r.modelSaw("STRANGER"))
	assert.Contains(t, r.logs.String(), "ignoring a group message from a user not allowed")
}

func TestGroupTriggerAll(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	in := r.say(team, alice, "plain words")
	r.finalAnswer(team, in.ID, "echo: plain words")
	r.say(team, mallory, "STRANGER plain words")
	r.sync("after the group")
	assert.False(t, r.modelSaw("STRANGER"), "all means every allowed user's message, not everyone's")
}

func TestCommandForAnotherBotIsIgnored(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	start := r.say(chat, alice, "/start@otherbot")
	compact := r.say(chat, alice, "/compact@otherbot now")
	r.sync("after the commands")
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		assert.NotEqual(t, start.ID, m.ReplyTo)
		assert.NotEqual(t, compact.ID, m.ReplyTo)
	}
	assert.False(t, r.modelSaw("otherbot"), "not sent to Claude as text")
}

package bridge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// A group upgraded to a supergroup gets a new chat id; its conversation goes
// on there: the same session, with its history, and its settings.
func TestGroupUpgradeKeepsTheSession(t *testing.T) {
	const group, super = telegramtest.ChatID(-42), telegramtest.ChatID(-100042)
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(group), int64(super)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
	}))
	r.tg.AddChat(telegramtest.Chat{ID: group, Type: telegramtest.Group, Title: "team"})
	r.tg.AddChat(telegramtest.Chat{ID: super, Type: telegramtest.Supergroup, Title: "team"})

	first := r.say(group, alice, "MIGRATE-BEFORE in the old group")
	r.finalAnswer(group, first.ID, "echo: MIGRATE-BEFORE")
	before := r.sessionOf(state.ChatKey{Chat: state.ChatID(group)})
	require.NotEmpty(t, before)

	// Telegram announces the upgrade in both chats.
	r.tg.UserSends(group, telegramtest.User{ID: alice, FirstName: "U"}, "", telegramtest.WithRawFields(map[string]json.RawMessage{
		"migrate_to_chat_id": json.RawMessage(`-100042`)}))
	r.tg.UserSends(super, telegramtest.User{ID: alice, FirstName: "U"}, "", telegramtest.WithRawFields(map[string]json.RawMessage{
		"migrate_from_chat_id": json.RawMessage(`-42`)}))

	after := r.say(super, alice, "MIGRATE-AFTER in the supergroup")
	r.finalAnswer(super, after.ID, "echo: MIGRATE-AFTER")
	calls := r.claude.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.True(t, last.AnyUserContains("MIGRATE-BEFORE"), "the supergroup's turn resumed the group's session")
	assert.Equal(t, before, r.sessionOf(state.ChatKey{Chat: state.ChatID(super)}), "the session moved with the chat")
	for _, m := range r.tg.Snapshot().BotMessages(super) {
		assert.False(t, strings.Contains(m.Text, "not supported"), "the service messages are not prompts: %q", m.Text)
	}
	for _, c := range calls {
		assert.False(t, c.AnyUserContains("migrate"), "no service message reached Claude")
	}
}

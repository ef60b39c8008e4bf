package bridge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/bridge/tgfake"
	"github.com/untether/untether/internal/config"
)

// A group upgraded to a supergroup gets a new chat id; its conversation goes
// on there: the same session, with its history, and its settings.
func TestGroupUpgradeKeepsTheSession(t *testing.T) {
	const group, super = tgfake.ChatID(-42), tgfake.ChatID(-100042)
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(group), int64(super)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
	}))
	r.tg.AddChat(tgfake.Chat{ID: group, Type: tgfake.Group, Title: "team"})
	r.tg.AddChat(tgfake.Chat{ID: super, Type: tgfake.Supergroup, Title: "team"})

	first := r.say(group, alice, "MIGRATE-BEFORE in the old group")
	r.finalAnswer(group, first.ID, "echo: MIGRATE-BEFORE")
	before := r.sessionOf(state.ChatKey{Chat: state.ChatID(group)})
	require.NotEmpty(t, before)

	// Telegram announces the upgrade in both chats.
	r.tg.UserSends(group, tgfake.User{ID: alice, FirstName: "U"}, "", tgfake.WithRawFields(map[string]json.RawMessage{
		"migrate_to_chat_id": json.RawMessage(`-100042`)}))
	r.tg.UserSends(super, tgfake.User{ID: alice, FirstName: "U"}, "", tgfake.WithRawFields(map[string]json.RawMessage{
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

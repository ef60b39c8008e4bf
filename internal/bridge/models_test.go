package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// lastModel is the model of the last model call that answered prompt.
func (r *rig) lastModel(prompt string) string {
	r.t.Helper()
	model := ""
	for _, c := range r.claude.API.ModelCalls() {
		if c.LastPrompt() == prompt {
			model = c.Model()
		}
	}
	require.NotEmpty(r.t, model, "a model call for %q", prompt)
	return model
}

func TestModelSwitchOnTheLiveCLI(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withTrustScript())
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	before := r.lastModel("hello")

	t.Run("valid", func(t *testing.T) {
		md := r.say(chat, alice, "/model claude-sonnet-4-5")
		r.waitBot(chat, "switched", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && m.Text == "Model: claude-sonnet-4-5" })
		in := r.say(chat, alice, "on sonnet")
		r.finalAnswer(chat, in.ID, "echo: on sonnet")
		assert.Equal(t, "claude-sonnet-4-5", r.lastModel("on sonnet"))
		assert.Equal(t, "claude-sonnet-4-5", r.storedChat(key).Model)
	})
	t.Run("unknown name", func(t *testing.T) {
		md := r.say(chat, alice, "/model no-such-model-9")
		refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
		assert.Contains(t, refusal.Text, "Claude refused the model no-such-model-9")
		assert.Contains(t, refusal.Text, "not found")
		assert.Contains(t, refusal.Text, "Still on claude-sonnet-4-5")
		in := r.say(chat, alice, "still sonnet")
		r.finalAnswer(chat, in.ID, "echo: still sonnet")
		assert.Equal(t, "claude-sonnet-4-5", r.lastModel("still sonnet"))
		assert.Equal(t, "claude-sonnet-4-5", r.storedChat(key).Model)
	})
	assert.NotEqual(t, "claude-sonnet-4-5", before, "the test switches away from the default")
}

// TestUnknownModelWithoutCLIFallsBack: with no CLI to check it, the model is
// recorded; the start that fails on it puts the chat back on the configured
// model and says so.
func TestUnknownModelWithoutCLIFallsBack(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withTrustScript(), withConfig(func(c *config.Config) { c.Claude.Model = "claude-haiku-4-5" }))
	md := r.say(chat, alice, "/model no-such-model-7")
	r.waitBot(chat, "recorded", func(m telegramtest.Message) bool {
		return m.ReplyTo == md.ID && strings.HasPrefix(m.Text, "Model: no-such-model-7") && strings.Contains(m.Text, "falls back")
	})
	in := r.say(chat, alice, "hello")
	r.waitBot(chat, "fallback notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The model no-such-model-7 did not work, so this chat is back on claude-haiku-4-5")
	})
	assert.Equal(t, "no-such-model-7", r.lastModel("hello"), "the start tried the chosen model")
	assert.Empty(t, r.storedChat(key).Model)
	again := r.say(chat, alice, "hello again")
	r.finalAnswer(chat, again.ID, "echo: hello again")
	assert.Equal(t, "claude-haiku-4-5", r.lastModel("hello again"))
	r.waitBot(chat, "the failed turn's own answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "issue with the selected model")
	})
}

func TestModelButtons(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.Models = []string{"claude-sonnet-4-5", "claude-haiku-4-5"} }))
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	md := r.say(chat, alice, "/model")
	menu := r.waitBot(chat, "model menu", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && len(m.Keyboard) > 0 })
	require.NotEmpty(t, buttonData(menu, "claude-haiku-4-5"))
	r.tg.UserPresses(chat, menu.ID, buttonData(menu, "claude-haiku-4-5"))
	r.waitBot(chat, "menu answered", func(m telegramtest.Message) bool {
		return m.ID == menu.ID && len(m.Keyboard) == 0 && m.Text == "Model: claude-haiku-4-5"
	})
	next := r.say(chat, alice, "on haiku")
	r.finalAnswer(chat, next.ID, "echo: on haiku")
	assert.Equal(t, "claude-haiku-4-5", r.lastModel("on haiku"))
}

package bridge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// Edge cases of the hand-over between the phone and a terminal (places'
// handoff.go and pickup.go), through the whole stack with the real CLI.

// TestTerminalCloseCancelledByAMessage: 💻 Terminal pressed while a turn
// runs closes the chat's CLI once the chat is idle, unless the phone
// writes meanwhile: that takes the session back, so the CLI is not closed
// after the message's turn, nor the session said to be the terminal's, and
// the next message goes to the same CLI.
func TestTerminalCloseCancelledByAMessage(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) { c.Progress.Drafts = false }))
	first := r.ask(chat, "hello")

	in := r.say(chat, alice, "STEADY please")
	r.waitBot(chat, "progress", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	live := r.b.ChatPID(key)
	require.NotZero(t, live)
	r.press(chat, first.ID, "💻 Terminal")
	r.waitBot(chat, "closes after the turn", func(m telegramtest.Message) bool {
		return m.Text == "💻 Claude here closes this session once its turn is over; then it is yours at the terminal."
	})
	back := r.say(chat, alice, "PHONE taking it back")
	r.finalAnswer(chat, in.ID, "steady words")
	r.finalAnswer(chat, back.ID, "echo: PHONE taking it back")
	next := r.ask(chat, "PHONE still here") // a close after the last turn would have come by its answer
	assert.Contains(t, next.Text, "echo: PHONE still here")
	assert.Equal(t, live, r.b.ChatPID(key), "the same CLI answered throughout")
	assert.False(t, pidGone(live))
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		assert.NotContains(t, m.Text, "This session is yours at the terminal now")
	}
}

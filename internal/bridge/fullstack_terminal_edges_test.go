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

// TestTerminalTurnsUnseenWhileThePlaceMoved: a terminal adds a turn while
// the phone's CLI is idle, and a config reload moves the chat's place (its
// default project) before the phone writes again. The CLI is not let go
// of (that would move the session), so the message goes to it, which does
// not see the terminal's turn, and its answer says so. That answer forks
// the session: a resume would go on from it, without the terminal's turn.
// So once the place is back, the next message is not made to resume the
// session anew for a pickup that would send Claude nothing: the same CLI
// answers, and no answer claims the turn was picked up.
func TestTerminalTurnsUnseenWhileThePlaceMoved(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	alpha, beta := realDir(t), realDir(t)
	var person string
	r := newRig(t, withPersonClaude(&person), withProjects(map[string]config.Project{"alpha": {Path: alpha}, "beta": {Path: beta}},
		func(c *config.Config) {
			c.Telegram.DefaultProject = "alpha"
			c.Claude.Binary = "claude"
		}))
	moveTo := func(name string) {
		cfg := *r.b.Config()
		cfg.Telegram.DefaultProject = name
		r.b.Reload(&cfg)
	}

	first := r.ask(chat, "REMEMBER plum")
	assert.Equal(t, "echo: TERMINAL at the desk\n", typeAtTerminal(t, footerLine(t, first), "TERMINAL at the desk"))
	live := r.b.ChatPID(key)
	require.NotZero(t, live)

	moveTo("beta")
	moved := r.ask(chat, "PHONE while the place moved")
	assert.Equal(t, live, r.b.ChatPID(key), "the CLI was kept: letting go of it would move the session")
	assert.False(t, r.callFor("PHONE while the place moved").AnyUserContains("TERMINAL at the desk"), "it went on from its own copy")
	assert.Contains(t, moved.Text, "💻 1 turn from the terminal not picked up: a reload moved this chat since Claude here started")

	moveTo("alpha")
	back := r.ask(chat, "PHONE back in alpha")
	assert.Equal(t, live, r.b.ChatPID(key), "not resumed anew: the terminal's turn is off the session's line now")
	assert.False(t, pidGone(live))
	assert.True(t, r.callFor("PHONE back in alpha").AnyUserContains("PHONE while the place moved"))
	assert.NotContains(t, back.Text, "picked up")
}

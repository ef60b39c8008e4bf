package bridge_test

import (
	"strings"
	"testing"
	"time"

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

// TestTerminalTurnWhileBusyForks: a terminal adds a turn, with the line as
// printed, while the phone's CLI is busy with one. The phone's answer,
// written after it, follows the phone's own prompt, so the session forks:
// the terminal's turn is on a side branch. The phone's next message does
// not claim it picked it up, and its model request does not carry it; the
// answer says so. The CLI is let go of all the same, so that the session's
// line for the next resume is the phone's (the closing CLI names its leaf
// in the transcript): the terminal's next resume goes on with the phone's
// turns, and what it adds is picked up as usual.
func TestTerminalTurnWhileBusyForks(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	var person string
	r := newRig(t, withPersonClaude(&person))
	line := footerLine(t, r.ask(chat, "REMEMBER plum"))

	const slow = "SLOW tell me more"
	in := r.say(chat, alice, slow)
	require.Eventually(t, func() bool {
		for _, c := range r.claude.API.ModelCalls() {
			if c.LastPrompt() == slow {
				return true
			}
		}
		return false
	}, wait, 20*time.Millisecond, "the phone's turn runs")
	assert.Equal(t, "echo: TERMINAL while the phone was busy\n", typeAtTerminal(t, line, "TERMINAL while the phone was busy"))
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		require.False(t, m.ReplyTo == in.ID && strings.Contains(m.Text, "⏱"), "the terminal's turn ended before the phone's answer")
	}
	r.finalAnswer(chat, in.ID, "slow answer")
	busy := r.b.ChatPID(key)
	require.NotZero(t, busy)

	next := r.ask(chat, "PHONE after the fork")
	call := r.callFor("PHONE after the fork")
	assert.False(t, call.AnyUserContains("TERMINAL while the phone was busy"), "the model was not sent the terminal's turn")
	assert.True(t, call.AnyUserContains(slow), "it went on from the phone's branch")
	assert.NotContains(t, next.Text, "💻 picked up")
	assert.Contains(t, next.Text, "💻 1 turn from the terminal not picked up: it is on a branch this conversation does not continue "+
		"(a turn typed while Claude here was busy forks it), so Claude did not see it")
	assert.Eventually(t, func() bool { return pidGone(busy) }, wait, 20*time.Millisecond, "let go of, so its leaf is the session's")
	live := r.b.ChatPID(key)
	require.NotZero(t, live)

	assert.Equal(t, "echo: TERMINAL again\n", typeAtTerminal(t, line, "TERMINAL again"))
	atDesk := r.callFor("TERMINAL again")
	assert.True(t, atDesk.AnyUserContains("PHONE after the fork"), "the terminal's resume goes on from the phone's branch")
	assert.False(t, atDesk.AnyUserContains("TERMINAL while the phone was busy"), "without the forked turn")
	back := r.ask(chat, "PHONE back again")
	assert.Contains(t, back.Text, "💻 picked up 1 turn from the terminal")
	assert.NotContains(t, back.Text, "not picked up")
	assert.True(t, r.callFor("PHONE back again").AnyUserContains("TERMINAL again"))
	assert.Eventually(t, func() bool { return pidGone(live) }, wait, 20*time.Millisecond, "the idle CLI was let go of for the pickup")
}

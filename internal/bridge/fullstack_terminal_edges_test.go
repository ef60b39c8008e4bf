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
	r, line, busy := forkWhileBusy(t)

	next := r.ask(chat, "PHONE after the fork")
	call := r.callFor("PHONE after the fork")
	assert.False(t, call.AnyUserContains("TERMINAL while the phone was busy"), "the model was not sent the terminal's turn")
	assert.True(t, call.AnyUserContains(slowPrompt), "it went on from the phone's branch")
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

// slowPrompt is the phone's turn a terminal's turn forks.
const slowPrompt = "SLOW tell me more"

// forkWhileBusy starts a session from the phone, types a turn at the
// terminal with its resume line while the phone's next turn (slowPrompt)
// runs, and waits for that turn's answer. It returns the rig, the line and
// the pid of the chat's CLI.
func forkWhileBusy(t *testing.T) (*rig, string, int) {
	t.Helper()
	chat := telegramtest.ChatID(alice)
	var person string
	r := newRig(t, withPersonClaude(&person))
	line := footerLine(t, r.ask(chat, "REMEMBER plum"))
	in := r.say(chat, alice, slowPrompt)
	require.Eventually(t, func() bool { return r.callsWith(slowPrompt) > 0 }, wait, 20*time.Millisecond, "the phone's turn runs")
	assert.Equal(t, "echo: TERMINAL while the phone was busy\n", typeAtTerminal(t, line, "TERMINAL while the phone was busy"))
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		require.False(t, m.ReplyTo == in.ID && strings.Contains(m.Text, "⏱"), "the terminal's turn ended before the phone's answer")
	}
	r.finalAnswer(chat, in.ID, "slow answer")
	pid := r.b.ChatPID(state.ChatKey{Chat: state.ChatID(alice)})
	require.NotZero(t, pid)
	return r, line, pid
}

// TestTerminalTurnsOnTheForkedBranch: after a turn typed at the terminal
// while the phone's was running forked the session, the terminal resumes
// again before the phone writes. While the phone's CLI runs, that resume
// goes on from the terminal's own branch (its CLI named it on exiting), so
// the new turn is on that branch too, though written last. The phone's
// next message claims neither: the CLI it lets go of names its own answer
// on exiting, and the resumed CLI goes on from there, without them.
func TestTerminalTurnsOnTheForkedBranch(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r, line, _ := forkWhileBusy(t)
	assert.Equal(t, "echo: TERMINAL on its branch\n", typeAtTerminal(t, line, "TERMINAL on its branch"))
	assert.True(t, r.callFor("TERMINAL on its branch").AnyUserContains("TERMINAL while the phone was busy"), "the terminal's resume went on from its branch")

	next := r.ask(chat, "PHONE after the fork")
	call := r.callFor("PHONE after the fork")
	assert.False(t, call.AnyUserContains("TERMINAL while the phone was busy"))
	assert.False(t, call.AnyUserContains("TERMINAL on its branch"), "the model was not sent the branch's turns")
	assert.True(t, call.AnyUserContains(slowPrompt))
	assert.NotContains(t, next.Text, "💻 picked up")
	assert.Contains(t, next.Text, "💻 2 turns from the terminal not picked up: they are on a branch this conversation does not continue")
}

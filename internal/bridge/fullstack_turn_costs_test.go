package bridge_test

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// turnsOf is the chat's recorded turns, newest first.
func (r *rig) turnsOf(key state.ChatKey) []state.TurnRecord {
	r.t.Helper()
	turns, err := r.store.RecentTurns(context.Background(), key, 0)
	require.NoError(r.t, err)
	return turns
}

// /new in the middle of a turn lets the session go, and its CLI is
// interrupted: the cost the interrupted turn's result reports is charged
// all the same, so the budget sees it and refuses the next message. (It
// used to be drained unread: three interrupted turns spent $2.40 against
// a $1.00 budget that counted $0.)
func TestNewDuringATurnStillChargesIt(t *testing.T) {
	key := state.ChatKey{Chat: state.ChatID(team)}
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(team)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
		c.Budget.DailyUSD = 0.001 // less than any turn of the fake API
	}))
	r.addTeam()
	in := r.say(team, alice, "SLOW please")
	r.waitBot(team, "progress with streamed text", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "slow answer")
	})
	before := r.sessionOf(key)
	r.command(team, "/new", "New session")
	require.Eventually(t, func() bool { return len(r.turnsOf(key)) == 1 }, wait, 20*time.Millisecond,
		"the interrupted turn is recorded")
	turn := r.turnsOf(key)[0]
	assert.Equal(t, before, turn.SessionID)
	assert.Positive(t, turn.CostUSD, "with the cost its result reported")
	assert.NotEqual(t, "no_result", turn.TerminalReason, "the CLI reported it: no estimate")

	next := r.say(team, alice, "and now?")
	refusal := r.waitBot(team, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == next.ID })
	assert.Contains(t, refusal.Text, "The daily budget is used up")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "and now?"))
}

// useFakeCLI makes c run the test binary as the CLI (fakecli_test.go).
func useFakeCLI(c *config.Config) {
	c.Claude.Binary = os.Args[0]
	c.Claude.Env = map[string]string{envFakeCLI: "1"}
}

// withFakeCLI runs the fake CLI: a HOLD message keeps its turn open, and
// an interrupt does not end it.
func withFakeCLI(mutate func(*config.Config)) rigOption {
	return withConfig(func(c *config.Config) {
		useFakeCLI(c)
		c.Claude.StopTimeout = config.Duration(time.Second)
		mutate(c)
	})
}

// waitHeld waits until the CLI has started the HOLD turn (its model, from
// system/init, is in the progress message).
func (r *rig) waitHeld(chat telegramtest.ChatID, in telegramtest.Message) {
	r.t.Helper()
	r.waitBot(chat, "the held turn's progress", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "fake-model")
	})
}

// A CLI that dies in the middle of a turn reports nothing about it. A
// session let go of with /new whose CLI does not end its turn when asked
// is killed: that turn is charged [budget] unreported_turn_usd.
func TestDetachedTurnWithoutAResultIsChargedTheEstimate(t *testing.T) {
	key := state.ChatKey{Chat: state.ChatID(team)}
	r := newRig(t, withFakeCLI(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(team)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
		c.Budget.UnreportedTurnUSD = 0.25
	}))
	r.addTeam()
	in := r.say(team, alice, "HOLD this turn")
	r.waitHeld(team, in)
	r.command(team, "/new", "New session")
	require.Eventually(t, func() bool { return len(r.turnsOf(key)) == 1 }, wait, 20*time.Millisecond)
	turn := r.turnsOf(key)[0]
	assert.Equal(t, "no_result", turn.TerminalReason)
	assert.InDelta(t, 0.25, turn.CostUSD, 1e-9)
	spent, err := r.store.CostSince(context.Background(), time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.InDelta(t, 0.25, spent, 1e-9, "the budgets count it")
}

// A chat's own CLI killed in the middle of a turn: the turn is charged the
// estimate, bounded by what the CLI's --max-budget-usd still allowed, and
// the crash notice says so where budgets apply.
func TestCrashedTurnIsChargedAtMostWhatItsCapAllowed(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withFakeCLI(func(c *config.Config) {
		c.Budget.DailyUSD = 0.5 // the estimate (1.00 by default) is more than the CLI may spend
	}))
	first := r.say(chat, alice, "hello")
	r.finalAnswer(chat, first.ID, "echo: hello") // the fake CLI reports $0.01
	in := r.say(chat, alice, "HOLD this turn")
	r.waitHeld(chat, in)
	pid := r.b.ChatPID(key)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	r.waitBot(chat, "crash notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "💸 Claude did not report what this turn cost, so it counts as $0.4900 against the budgets")
	})
	turns := r.turnsOf(key)
	require.Len(t, turns, 2)
	assert.Equal(t, "no_result", turns[0].TerminalReason)
	assert.InDelta(t, 0.49, turns[0].CostUSD, 1e-9, "what the cap of $0.50 still allowed after $0.01")
	next := r.say(chat, alice, "more")
	refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == next.ID })
	assert.Contains(t, refusal.Text, "The daily budget is used up")
}

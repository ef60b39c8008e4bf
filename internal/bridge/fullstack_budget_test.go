package bridge_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// cliArg is the value of flag on the command line of the chat's live CLI.
func (r *rig) cliArg(key state.ChatKey, flag string) (pid int, value string) {
	r.t.Helper()
	pid = r.b.ChatPID(key)
	require.NotZero(r.t, pid, "the chat has a live CLI")
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(r.t, err)
	args := strings.Split(string(raw), "\x00")
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return pid, args[i+1]
		}
	}
	return pid, ""
}

// Budgets from the fake API's usage numbers (each echo turn costs about
// $0.004 there): a warning at warn_at, a turn the CLI stops at the cap
// untether gave it, a refusal that never reaches the model, /budget, and
// the reset when the clock passes midnight, which restarts the CLI with a
// fresh cap.
func TestBudgetWarnRefuseReset(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	clock := timeshift.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	r := newRig(t, func(r *rig) { r.clock = clock }, withConfig(func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Budget = config.Budget{DailyUSD: 0.01, WarnAt: 0.5}
	}))

	one := r.say(chat, alice, "one")
	a1 := r.finalAnswer(chat, one.ID, "echo: one")
	assert.NotContains(t, a1.Text, "💰", "under warn_at: no warning")
	_, capArg := r.cliArg(key, "--max-budget-usd")
	assert.Equal(t, "0.01", capArg, "the CLI is capped at what is left of the budget")

	two := r.say(chat, alice, "two")
	a2 := r.finalAnswer(chat, two.ID, "echo: two")
	assert.Regexp(t, `💰 \d+ % of the daily budget used \(\$0\.0\d+ of \$0\.0100\), resets tomorrow 00:00 UTC`, a2.Text)

	three := r.say(chat, alice, "three")
	a3 := r.waitBot(chat, "the turn the CLI stopped", func(m telegramtest.Message) bool {
		return m.ReplyTo == three.ID && strings.Contains(m.Text, "⏱")
	})
	assert.Contains(t, a3.Text, "Budget limit reached")
	assert.Contains(t, a3.Text, "Claude stopped at the spending cap untether gave it ($0.0100, what was left of the daily budget)")
	assert.Equal(t, 1, strings.Count(a3.Text, "💰 "+"Claude"), "the cap line")
	assert.NotContains(t, a2.Text+a3.Text, "used up", "no second warning")

	calls := len(r.claude.API.ModelCalls())
	before := clock.Now()
	four := r.say(chat, alice, "four")
	refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == four.ID })
	after := clock.Now()
	assert.Contains(t, refusal.Text, "The daily budget is used up")
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	assertRenderedBetween(t, refusal.Text, before, after, func(now time.Time) string {
		return "resets " + render.FormatUntil(midnight, now)
	})
	assert.Regexp(t, `resets tomorrow 00:00 UTC \(in 1[12]h\d\dm\)`, refusal.Text)
	budget := r.say(chat, alice, "/budget")
	shown := r.waitBot(chat, "/budget", func(m telegramtest.Message) bool { return m.ReplyTo == budget.ID })
	assert.Contains(t, shown.Text, "Daily: $0.01")
	assert.Contains(t, shown.Text, "⛔ used up")
	assert.Contains(t, shown.Text, "New messages are refused until tomorrow 00:00 UTC.")
	assert.Equal(t, calls, len(r.claude.API.ModelCalls()), "the refused message never reached the model")
	spent, err := r.store.CostSince(context.Background(), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Greater(t, spent, 0.01, "the turns' costs were recorded on the clock's day")

	oldPID := r.b.ChatPID(key)
	clock.Advance(12 * time.Hour) // past midnight: a new day, a new budget
	five := r.say(chat, alice, "five")
	a5 := r.finalAnswer(chat, five.ID, "echo: five")
	assert.NotContains(t, a5.Text, "💰")
	pid, capArg := r.cliArg(key, "--max-budget-usd")
	assert.NotEqual(t, oldPID, pid, "the CLI was restarted for the new day's cap")
	assert.Equal(t, "0.01", capArg)
	last := r.claude.API.ModelCalls()[len(r.claude.API.ModelCalls())-1]
	assert.True(t, last.AnyUserContains("two"), "the session resumed with its history")
}

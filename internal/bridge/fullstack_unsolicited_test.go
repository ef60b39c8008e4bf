package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// A turn the CLI starts by itself (here when a background job ends) is
// charged like a typed one (issue 24 §1): it is in the turns table with
// its cost, /usage counts it, and a budget counts it. Each turn costs the
// fake API's usage numbers: the job's turn (two model calls) about
// $0.0084, the CLI's own turn about $0.0041, so the $0.011 daily budget is
// used up only with the second one counted.
func TestATurnClaudeStartsCountsLikeATypedOne(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	clock := timeshift.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	r := newRig(t, func(r *rig) { r.clock = clock }, withRules(fakeapi.ToolTurn("BGJOB", "Bash", map[string]any{
		"command": "sleep 2; echo job-done", "run_in_background": true, "description": "short job"}, "Started it.")),
		withConfig(func(c *config.Config) {
			c.Telegram.Timezone = "UTC"
			c.Budget = config.Budget{DailyUSD: 0.011, WarnAt: 0.99}
		}))
	in := r.say(chat, alice, "BGJOB please")
	first := r.finalAnswer(chat, in.ID, "Started it.")
	r.waitBot(chat, "the turn the CLI starts when the job ends", func(m telegramtest.Message) bool {
		return m.ID > first.ID && strings.HasPrefix(m.Text, "🧵 Background command") && strings.Contains(m.Text, "⏱")
	})
	require.Eventually(t, func() bool { return len(r.turnsOf(key)) == 2 }, wait, 20*time.Millisecond, "both turns are recorded")
	for _, tr := range r.turnsOf(key) {
		assert.Positive(t, tr.CostUSD, "with its cost")
	}

	u := r.say(chat, alice, "/usage")
	usage := r.waitBot(chat, "/usage", func(m telegramtest.Message) bool { return m.ReplyTo == u.ID })
	assert.Contains(t, usage.Text, "2 turns")

	calls := len(r.claude.API.ModelCalls())
	next := r.say(chat, alice, "after the job")
	refusal := r.waitBot(chat, "the budget's refusal", func(m telegramtest.Message) bool { return m.ReplyTo == next.ID })
	assert.Contains(t, refusal.Text, "The daily budget is used up", "the turn Claude started counted against it")
	assert.Equal(t, calls, len(r.claude.API.ModelCalls()))
}

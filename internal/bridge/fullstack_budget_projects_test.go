package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// TestProjectBudgetRefusesOnlyItsProject: a project with a budget of its
// own below one echo turn's cost (about $0.004 from the fake API) is capped
// at the smaller of its remainder and the global one, its first turn uses
// it up, and the next message there is refused without reaching the model,
// naming the project; /budget shows both budgets; the chat's other project
// keeps working under the global budget.
func TestProjectBudgetRefusesOnlyItsProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	beta, gamma := realDir(t), realDir(t)
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	clock := timeshift.New(day.Add(12 * time.Hour))
	r := newRig(t, func(r *rig) { r.clock = clock }, withProjects(map[string]config.Project{
		"beta":  {Path: beta, Budget: config.ProjectBudget{DailyUSD: 0.003}},
		"gamma": {Path: gamma, Budget: config.ProjectBudget{DailyUSD: 0.007, WarnAt: 0.5}},
	}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Budget = config.Budget{DailyUSD: 0.5, WarnAt: 0.8}
	}))
	alpha := r.claude.Workdir

	r.ask(chat, "in default")
	_, capArg := r.cliArg(key, "--max-budget-usd")
	assert.Equal(t, "0.5", capArg, "default has no budget of its own: the global one caps it")

	r.command(chat, "/project beta", "starts a new session")
	b1 := r.say(chat, alice, "first in beta")
	a1 := r.waitBot(chat, "beta's first answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == b1.ID && strings.Contains(m.Text, "⏱")
	})
	assert.True(t, ranIn(r.callFor("first in beta"), beta))
	_, capArg = r.cliArg(key, "--max-budget-usd")
	assert.Equal(t, "0.003", capArg, "the smaller remainder: beta's own budget")
	assert.Contains(t, a1.Text, "Claude stopped at the spending cap untether gave it ($0.0030, what was left of the daily budget of project beta)")

	calls := len(r.claude.API.ModelCalls())
	b2 := r.say(chat, alice, "second in beta")
	refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == b2.ID })
	assert.Contains(t, refusal.Text, "The daily budget of project beta is used up")
	assert.Contains(t, refusal.Text, "resets tomorrow 00:00 UTC")
	assert.Contains(t, refusal.Text, "work in another project (/project)")
	assert.Equal(t, calls, len(r.claude.API.ModelCalls()), "the refused message never reached the model")

	shown := r.command(chat, "/budget", "Budget")
	assert.Contains(t, shown.Text, "Daily: $0.", "the global line")
	assert.Contains(t, shown.Text, "📁 beta\nDaily: $0.00")
	assert.Contains(t, shown.Text, "of $0.0030")
	assert.Contains(t, shown.Text, "⛔ used up")
	assert.Contains(t, shown.Text, "New messages in project beta are refused until tomorrow 00:00 UTC; other projects still work")

	r.command(chat, "/project default", "resumes its session")
	r.ask(chat, "back in default")
	assert.True(t, ranIn(r.callFor("back in default"), alpha), "the other project still works")

	// A project's own warn_at: once, naming the project.
	r.command(chat, "/project gamma", "starts a new session")
	g1 := r.ask(chat, "in gamma")
	assert.Regexp(t, `💰 \d+ % of the daily budget of project gamma used \(\$0\.00\d+ of \$0\.0070\), resets tomorrow 00:00 UTC`, g1.Text)
	_, capArg = r.cliArg(key, "--max-budget-usd")
	assert.Equal(t, "0.007", capArg)

	ctx := context.Background()
	inBeta, err := r.store.ProjectCostSince(ctx, "beta", day)
	require.NoError(t, err)
	assert.Greater(t, inBeta, 0.003, "beta's turn was filed under beta")
	inDefault, err := r.store.ProjectCostSince(ctx, "default", day)
	require.NoError(t, err)
	assert.Greater(t, inDefault, 0.0)
	inGamma, err := r.store.ProjectCostSince(ctx, "gamma", day)
	require.NoError(t, err)
	assert.Greater(t, inGamma, 0.0)
	total, err := r.store.CostSince(ctx, day)
	require.NoError(t, err)
	assert.InDelta(t, inBeta+inDefault+inGamma, total, 1e-9, "the global budget counts every project")
}

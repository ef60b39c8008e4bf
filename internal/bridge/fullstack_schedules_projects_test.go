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

// TestScheduleRunsInItsProject: a [[schedules]] entry naming a project
// moves the chat there (and says so) before its prompt goes out, so the
// CLI works in the project's directory; the chat stays there. The run
// obeys the project's budget: the first run uses it up, and the second
// entry's run is refused without reaching the model.
func TestScheduleRunsInItsProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	beta := realDir(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	clock := timeshift.New(day.Add(8*time.Hour + 58*time.Minute)) // 08:58 UTC
	r := newRig(t, func(r *rig) { r.clock = clock }, withProjects(map[string]config.Project{
		"beta": {Path: beta, Budget: config.ProjectBudget{DailyUSD: 0.003}},
	}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Schedules = []config.Schedule{
			{Chat: int64(alice), Project: "beta", Cron: "0 9 * * *", Prompt: "SCHEDULED in beta"},
			{Chat: int64(alice), Project: "beta", Cron: "10 9 * * *", Prompt: "SECOND in beta"},
		}
	}))
	alpha := r.claude.Workdir

	r.ask(chat, "working in default")
	assert.True(t, ranIn(r.callFor("working in default"), alpha))
	list := r.command(chat, "/schedules", "Scheduled prompts")
	assert.Contains(t, list.Text, "#1 cron 0 9 * * * (config file) · in project beta")

	clock.Advance(3 * time.Minute) // 09:01
	moved := r.waitBot(chat, "the switch", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "runs in project beta") })
	assert.Contains(t, moved.Text, "⏰ Scheduled #1 runs in project beta, so this chat works there now: "+beta)
	answer := r.waitBot(chat, "the scheduled answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "⏱") && strings.Contains(m.Text, "⏰ scheduled #1")
	})
	assert.Contains(t, answer.Text, "📁 beta", "the footer names the project")
	assert.True(t, ranIn(r.callFor("SCHEDULED in beta"), beta), "the CLI ran in beta's directory")
	assert.False(t, r.callFor("SCHEDULED in beta").AnyUserContains("working in default"), "beta's own session")
	rec, err := r.store.GetChat(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, "beta", rec.Project, "the chat stays in beta")

	calls := len(r.claude.API.ModelCalls())
	clock.Advance(10 * time.Minute) // 09:11: beta's budget is used up
	refusal := r.waitBot(chat, "the refused run", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The daily budget of project beta is used up")
	})
	assert.Contains(t, refusal.Text, "resets tomorrow 00:00 UTC")
	assert.Equal(t, calls, len(r.claude.API.ModelCalls()), "the refused run never reached the model")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "SECOND in beta"))
}

// TestScheduleWaitsForForwardsBeingCollected: forwards still being
// collected when a schedule naming another project fires go to Claude
// first, in the project they were sent in; the run follows once their
// turn ends, and only then moves the chat.
func TestScheduleWaitsForForwardsBeingCollected(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	beta := realDir(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	clock := timeshift.New(day.Add(8*time.Hour + 58*time.Minute)) // 08:58 UTC
	r := newRig(t, func(r *rig) { r.clock = clock }, withProjects(map[string]config.Project{"beta": {Path: beta}},
		func(c *config.Config) {
			c.Telegram.Timezone = "UTC"
			c.Telegram.ForwardWait = config.Duration(time.Minute) // still collecting when the run fires
			c.Schedules = []config.Schedule{{Chat: int64(alice), Project: "beta", Cron: "0 9 * * *", Prompt: "SCHEDULED in beta"}}
		}))
	alpha := r.claude.Workdir

	fwd := r.tg.UserSends(chat, aliceUser, "FWDMARK the build is red", telegramtest.Forwarded(telegramtest.ForwardOrigin{
		Type: "user", Date: time.Date(2025, 5, 6, 7, 8, 0, 0, time.UTC), SenderUser: telegramtest.User{ID: 77, FirstName: "Bob"}}))
	r.command(chat, "/status", "Project") // the chat took the forward in before this
	require.Empty(t, r.claude.API.ModelCalls(), "the forward is still being collected")

	clock.Advance(3 * time.Minute) // 09:01
	r.finalAnswer(chat, fwd.ID, "forwarded 1 message")
	r.waitBot(chat, "the scheduled answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "⏱") && strings.Contains(m.Text, "⏰ scheduled #1")
	})
	calls := r.claude.API.ModelCalls()
	require.Len(t, calls, 2)
	assert.True(t, calls[0].AnyUserContains("FWDMARK"), "the forward went first")
	assert.True(t, ranIn(calls[0], alpha), "in the project it was sent in")
	assert.True(t, ranIn(calls[1], beta), "then the run, in its project")
}

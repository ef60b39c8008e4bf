package render_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

var (
	cet   = time.FixedZone("CET", 3600)
	awayT = time.Date(2026, 11, 30, 13, 47, 0, 0, cet) // a Monday
)

func awayGolden(t *testing.T, name, got string) {
	t.Helper()
	require.NoError(t, validateTelegramHTML(got), got)
	checkGolden(t, filepath.Join("../../testdata/render/away", name+".golden.html"), got)
}

func TestFormatWhen(t *testing.T) {
	tests := []struct {
		at   time.Time
		want string
	}{
		{awayT.Add(2 * time.Hour), "15:47 CET"},
		{time.Date(2026, 12, 1, 9, 0, 0, 0, cet), "tomorrow 09:00 CET"},
		{time.Date(2026, 11, 29, 23, 0, 0, 0, cet), "yesterday 23:00 CET"},
		{time.Date(2026, 12, 4, 9, 0, 0, 0, cet), "Fri 4 Dec 09:00 CET"},
		{time.Date(2027, 1, 15, 9, 0, 0, 0, cet), "15 Jan 2027 09:00 CET"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render.FormatWhen(tt.at, awayT))
	}
}

func TestRenderUsage(t *testing.T) {
	day := func(n int) time.Time { return time.Date(2026, 11, 17+n, 0, 0, 0, 0, cet) }
	var days []render.UsageDay
	for i := range 14 {
		days = append(days, render.UsageDay{Day: day(i), CostUSD: float64(i%5) * 0.031, Turns: i % 5})
	}
	chats := func(n int) []render.UsageChat {
		var out []render.UsageChat
		for i := range n {
			out = append(out, render.UsageChat{Label: "chat " + strings.Repeat("x", i), UsageTotals: render.UsageTotals{CostUSD: 0.5 / float64(i+1), Turns: 3, InputTokens: 12345, OutputTokens: 678}})
		}
		return out
	}
	r := render.UsageReport{Now: awayT, Zone: "Europe/Paris", Days: days,
		Periods: []render.UsagePeriod{
			{Title: "Today", Total: render.UsageTotals{CostUSD: 0.0123, Turns: 1, InputTokens: 1000, OutputTokens: 20},
				Chats: []render.UsageChat{{Label: "this chat", UsageTotals: render.UsageTotals{CostUSD: 0.0123, Turns: 1, InputTokens: 1000, OutputTokens: 20}}}},
			{Title: "Last 7 days", Total: render.UsageTotals{CostUSD: 2.5, Turns: 21, InputTokens: 2_300_000, OutputTokens: 45_000}, Chats: chats(7)},
			{Title: "This month"},
		},
		Windows: []render.UsageWindow{
			{Type: "five_hour", Status: "allowed_warning", Utilization: 0.82, ResetsAt: awayT.Add(2*time.Hour + 13*time.Minute)},
			{Type: "seven_day", Status: "allowed", Utilization: 0.3, ResetsAt: awayT.Add(50 * time.Hour)},
			{Type: "seven_day_opus", Status: "rejected", Utilization: -1},
		},
		WindowsAt: awayT.Add(-5 * time.Minute)}
	awayGolden(t, "usage", render.RenderUsage(r))
	r.Windows, r.Days = nil, nil
	awayGolden(t, "usage-no-windows", render.RenderUsage(r))
}

func TestWindowWarning(t *testing.T) {
	ws := []render.UsageWindow{
		{Type: "five_hour", Utilization: 0.7, ResetsAt: awayT.Add(time.Hour)},
		{Type: "seven_day", Utilization: 0.69, ResetsAt: awayT.Add(time.Hour)},
		{Type: "seven_day_opus", Utilization: 0.95, ResetsAt: awayT.Add(-time.Minute)}, // already reset
	}
	assert.Equal(t, "📊 5-hour limit 70 % used, resets 14:47 CET (in 1h00m)", render.WindowWarning(ws, awayT))
	assert.Empty(t, render.WindowWarning(ws[1:], awayT))
}

func TestRenderBudget(t *testing.T) {
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, cet)
	daily := render.BudgetLimit{Period: "daily", LimitUSD: 5, SpentUSD: 4.1, ResetsAt: midnight}
	monthly := render.BudgetLimit{Period: "monthly", LimitUSD: 80, SpentUSD: 12.5, ResetsAt: midnight}
	awayGolden(t, "budget-none", render.RenderBudget(render.BudgetReport{Now: awayT, Zone: "Europe/Paris", WarnAt: 0.8, Today: 0.42, Month: 3.5}))
	awayGolden(t, "budget-warn", render.RenderBudget(render.BudgetReport{Now: awayT, Zone: "Europe/Paris", WarnAt: 0.8, Cap: 0.9,
		Limits: []render.BudgetLimit{daily, monthly}}))
	over := daily
	over.SpentUSD = 5.2
	awayGolden(t, "budget-over", render.RenderBudget(render.BudgetReport{Now: awayT, WarnAt: 0.8, Limits: []render.BudgetLimit{over, monthly}}))
	awayGolden(t, "budget-refusal", render.BudgetRefusal([]render.BudgetLimit{over, monthly}, awayT))
	assert.Empty(t, render.BudgetRefusal([]render.BudgetLimit{daily}, awayT))
	assert.Equal(t, "💰 82 % of the daily budget used ($4.10 of $5.00), resets tomorrow 00:00 CET (in 10h13m)", render.BudgetWarning(daily, awayT))
	assert.Equal(t, "💰 Claude stopped at the spending cap untether gave it ($0.9000, what was left of the daily budget). "+
		"New messages are refused until the budget resets tomorrow 00:00 CET (in 10h13m).", render.BudgetStopped(0.9, daily, awayT))
}

func TestRenderSchedules(t *testing.T) {
	r := render.SchedulesReport{Now: awayT, Zone: "Europe/Paris", Max: 20, Made: 2, CatchUp: true, Items: []render.ScheduledPrompt{
		{ID: 1, Cron: "0 9 * * 1-5", Prompt: "Summarise yesterday's commits", NextRun: time.Date(2026, 12, 1, 9, 0, 0, 0, cet), FromConfig: true,
			Project: "api"},
		{ID: 4, Prompt: "check <the> deploy & report", NextRun: awayT.Add(30 * time.Minute), DeleteData: "s:4"},
		{ID: 7, Cron: "@every 6h", Zone: "America/New_York", Prompt: strings.Repeat("long ", 50), NextRun: awayT.Add(6 * time.Hour),
			FreshSession: true, DeleteData: "s:7"},
	}}
	html, kb := render.RenderSchedules(r)
	awayGolden(t, "schedules", html)
	require.NoError(t, kb.Validate())
	assert.Equal(t, [][]render.Button{{{Text: "🗑 Delete #4", CallbackData: "s:4"}, {Text: "🗑 Delete #7", CallbackData: "s:7"}}}, kb.Rows)
	html, kb = render.RenderSchedules(render.SchedulesReport{Now: awayT, Paused: true, Max: 20})
	awayGolden(t, "schedules-none", html)
	assert.Empty(t, kb.Rows)
}

// The caller's notes come first: in progress after the stall line, in the
// answer above what happened.
func TestCallerNotes(t *testing.T) {
	tr := render.NewTurn(awayT)
	tr.Apply(runner.APIRetry{Attempt: 1, MaxRetries: 10, Delay: time.Second, Status: 529, Error: "overloaded"}, awayT)
	html, _ := render.RenderProgress(tr, render.ProgressOptions{Now: awayT, Notes: []string{"⏰ scheduled"}})
	assert.Less(t, strings.Index(html, "⏰ scheduled"), strings.Index(html, "🔁 API retry"), html)
	tc := runner.TurnCompleted{OK: true, Answer: "done", Duration: time.Second}
	tr.Apply(tc, awayT)
	notes := []string{"⏰ scheduled", "💰 80 % of the daily budget used"}
	chunks := render.RenderFinal(tc, render.FinalMeta{Happened: tr.Happened(), Notes: notes})
	last := chunks[len(chunks)-1]
	assert.Less(t, strings.Index(last, "⏰ scheduled"), strings.Index(last, "💰"))
	assert.Less(t, strings.Index(last, "💰"), strings.Index(last, "🔁 1 API retry"), last)
	assert.Len(t, notes, 2, "the caller's slice is not appended to")
}

func TestRenderLimitRetry(t *testing.T) {
	reset := awayT.Add(2*time.Hour + 13*time.Minute)
	var all []string
	for _, n := range []render.LimitRetry{
		{Window: "five_hour", State: render.LimitRetryAsked},
		{Window: "five_hour", State: render.LimitRetryScheduled},
		{Window: "seven_day", State: render.LimitRetryScheduled, By: "@alice"},
		{Window: "five_hour", State: render.LimitRetrySent, At: reset.Add(time.Second)},
		{Window: "", State: render.LimitRetryDropped, By: "@bob"},
		{Window: "five_hour", State: render.LimitRetryOff},
	} {
		n.ResetsAt, n.Label, n.RetryData, n.DropData = reset, "check <the> deploy", "L:tok", "Z:tok"
		html, kb := render.RenderLimitRetry(n, awayT)
		require.NoError(t, kb.Validate())
		var buttons []string
		for _, row := range kb.Rows {
			for _, b := range row {
				buttons = append(buttons, b.Text+" → "+b.CallbackData)
			}
		}
		all = append(all, "== "+string(n.State)+"\n"+html+"\n["+strings.Join(buttons, ", ")+"]")
	}
	awayGolden(t, "limit-retry", strings.Join(all, "\n\n"))
}

// TestRenderProjectBudget: a project's own budget is named in /budget, in
// the refusal (which points at the other projects), the warning and the
// stop.
func TestRenderProjectBudget(t *testing.T) {
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, cet)
	global := render.BudgetLimit{Period: "daily", LimitUSD: 10, SpentUSD: 3, ResetsAt: midnight}
	api := render.BudgetLimit{Period: "daily", Project: "api", LimitUSD: 2, SpentUSD: 2.5, ResetsAt: midnight}
	web := render.BudgetLimit{Period: "monthly", Project: "web", LimitUSD: 20, SpentUSD: 0.5, ResetsAt: midnight}
	projects := []render.ProjectBudget{{Name: "api", WarnAt: 0.8, Limits: []render.BudgetLimit{api}},
		{Name: "web", WarnAt: 0.5, Limits: []render.BudgetLimit{web}}}
	awayGolden(t, "budget-project-over", render.RenderBudget(render.BudgetReport{Now: awayT, Zone: "Europe/Paris", WarnAt: 0.8,
		Limits: []render.BudgetLimit{global}, Projects: projects, Here: "api"}))
	awayGolden(t, "budget-project-elsewhere", render.RenderBudget(render.BudgetReport{Now: awayT, WarnAt: 0.8, Cap: 7,
		Today: 3, Month: 3, Projects: projects, Here: "web"}))
	awayGolden(t, "budget-project-refusal", render.BudgetRefusal([]render.BudgetLimit{global, api}, awayT))
	assert.Equal(t, "💰 125 % of the daily budget of project api used ($2.50 of $2.00), resets tomorrow 00:00 CET (in 10h13m)",
		render.BudgetWarning(api, awayT))
	assert.Contains(t, render.BudgetStopped(0.5, api, awayT), "what was left of the daily budget of project api). New messages in project api are refused")
}

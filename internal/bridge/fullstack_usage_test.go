package bridge_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// unified are anthropic-ratelimit-unified-* headers for a subscription
// whose 5-hour window is at fiveHour and resets at reset.
func unified(status string, fiveHour float64, reset time.Time) map[string]string {
	return map[string]string{
		"anthropic-ratelimit-unified-status":               status,
		"anthropic-ratelimit-unified-reset":                strconv.FormatInt(reset.Unix(), 10),
		"anthropic-ratelimit-unified-representative-claim": "five_hour",
		"anthropic-ratelimit-unified-5h-status":            status,
		"anthropic-ratelimit-unified-5h-utilization":       strconv.FormatFloat(fiveHour, 'f', -1, 64),
		"anthropic-ratelimit-unified-5h-reset":             strconv.FormatInt(reset.Unix(), 10),
		"anthropic-ratelimit-unified-7d-status":            "allowed",
		"anthropic-ratelimit-unified-7d-utilization":       "0.3",
		"anthropic-ratelimit-unified-7d-reset":             strconv.FormatInt(reset.Add(72*time.Hour).Unix(), 10),
	}
}

// /usage: cost, turns and tokens from the turns table, the daily chart,
// and the subscription windows a subscription (OAuth) login reports; an
// answer warns when a window is at 70 % or more. With an API key there are
// no windows, and /usage says so.
func TestUsageAndWindows(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
	s := script()
	s.Default = &fakeapi.Reply{EchoUser: true, Headers: unified("allowed", 0.75, reset)}
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, s, claudetest.WithOAuthToken("sk-ant-oat01-fake")) },
		withConfig(func(c *config.Config) { c.Telegram.Timezone = "Asia/Tokyo" }))

	before := time.Now()
	in := r.say(chat, alice, "count me")
	answer := r.finalAnswer(chat, in.ID, "echo: count me")
	tokyo := config.LoadLocation("Asia/Tokyo")
	// The answer warns of a window at 70 % or more, in the users' zone.
	assertRenderedBetween(t, answer.Text, before, time.Now(), func(now time.Time) string {
		return "📊 5-hour limit 75 % used, resets " + render.FormatWhen(reset.In(tokyo), now)
	})
	assert.NotContains(t, answer.Text, "7-day limit", "a window under 70 % is not mentioned")

	var turns []state.TurnRecord
	require.Eventually(t, func() bool { // recorded just after the answer is sent
		var err error
		turns, err = r.store.TurnsSince(context.Background(), time.Now().Add(-time.Hour))
		return err == nil && len(turns) == 1
	}, wait, 10*time.Millisecond)
	assert.Positive(t, turns[0].InputTokens, "tokens are recorded")
	assert.Positive(t, turns[0].OutputTokens)

	u := r.say(chat, alice, "/usage")
	usage := r.waitBot(chat, "/usage", func(m telegramtest.Message) bool { return m.ReplyTo == u.ID })
	for _, want := range []string{
		"Usage (days in Asia/Tokyo)",
		"Today · $0.0", "1 turn · " + strconv.FormatFloat(float64(turns[0].InputTokens)/1000, 'f', 1, 64) + "k in / ",
		"this chat: $0.0",
		"Last 7 days · $0.0", "This month · $0.0",
		"Cost per day",
		"5-hour: 75 % used · resets " + render.FormatWhen(reset.In(tokyo), time.Now()) + " (in ",
		"7-day: 30 % used",
	} {
		assert.Contains(t, usage.Text, want)
	}
	chart, _, _ := strings.Cut(usage.Raw[strings.Index(usage.Raw, "<pre>"):], "</pre>")
	assert.Equal(t, 14, strings.Count(chart, "\n")+1, "one chart line per day")

	plain := newRig(t) // an API key: the CLI reports no windows
	in = plain.say(chat, alice, "hello")
	plain.finalAnswer(chat, in.ID, "echo: hello")
	u = plain.say(chat, alice, "/usage")
	usage = plain.waitBot(chat, "/usage", func(m telegramtest.Message) bool { return m.ReplyTo == u.ID })
	assert.Contains(t, usage.Text, "Today · $0.0")
	assert.Contains(t, usage.Text, "None known yet")
}

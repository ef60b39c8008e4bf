package bridge_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// withRules runs the rig's real CLI against script() with extra rules
// tried first.
func withRules(rules []fakeapi.Rule, opts ...claudetest.Option) rigOption {
	return func(r *rig) {
		s := script()
		s.Rules = append(rules, s.Rules...)
		r.claude = claudetest.New(r.t, s, opts...)
	}
}

// The answer of a quick turn carries what happened in it (issue 8 §3):
// before, the notes lived only in the progress message, which a quick turn
// never gets and a long one loses when it is edited down at the end.
func TestQuickTurnAnswerCarriesItsNotices(t *testing.T) {
	chat := telegramtest.ChatID(alice)

	t.Run("API retry", func(t *testing.T) {
		r := newRig(t, withRules([]fakeapi.Rule{{Name: "retry-once", When: fakeapi.Match{PromptContains: "RETRYONCE"}, Once: true,
			Replies: []fakeapi.Reply{fakeapi.Error(529), fakeapi.Text("made it after a retry")}}}))
		in := r.say(chat, alice, "RETRYONCE please")
		m := r.finalAnswer(chat, in.ID, "made it after a retry")
		assert.Contains(t, m.Text, "🔁 1 API retry (last error: 529 overloaded)")
		var answered []int
		for _, c := range r.claude.API.ModelCalls() {
			if c.Rule == "retry-once" {
				answered = append(answered, c.Status)
			}
		}
		assert.Equal(t, []int{529, 200}, answered, "the fake API really failed once, then answered")
	})

	t.Run("manual compact", func(t *testing.T) {
		r := newRig(t, withRules([]fakeapi.Rule{{Name: "compact", When: fakeapi.Match{PromptContains: "CRITICAL: Respond with TEXT ONLY"},
			Replies: []fakeapi.Reply{fakeapi.Text("<summary>We said hello.</summary>")}}}))
		in := r.say(chat, alice, "hello there")
		r.finalAnswer(chat, in.ID, "echo: hello there")
		in2 := r.say(chat, alice, "/compact")
		m := r.finalAnswer(chat, in2.ID, "Conversation compacted")
		assert.Regexp(t, `Conversation compacted: [0-9.]+k? → [0-9.]+k? tokens`, m.Text)
		assert.NotContains(t, m.Text, "no text answer")
		var compacted bool
		for _, c := range r.claude.API.ModelCalls() {
			compacted = compacted || c.Rule == "compact"
		}
		assert.True(t, compacted, "the CLI asked the fake API for a summary")
	})

	t.Run("rate-limit window warning", func(t *testing.T) {
		// Subscription auth: the CLI reports the unified rate-limit headers
		// as a rate_limit_event whose top-level status stays "allowed" while
		// the 5-hour window warns (as in the real capture f4).
		reset := strconv.FormatInt(time.Now().Add(3*time.Hour).Unix(), 10)
		headers := map[string]string{
			"anthropic-ratelimit-unified-status":               "allowed",
			"anthropic-ratelimit-unified-reset":                reset,
			"anthropic-ratelimit-unified-representative-claim": "five_hour",
			"anthropic-ratelimit-unified-5h-status":            "allowed_warning",
			"anthropic-ratelimit-unified-5h-utilization":       "0.91",
			"anthropic-ratelimit-unified-5h-reset":             reset,
			"anthropic-ratelimit-unified-7d-status":            "allowed",
			"anthropic-ratelimit-unified-7d-utilization":       "0.4",
			"anthropic-ratelimit-unified-7d-reset":             reset,
		}
		r := newRig(t, withRules([]fakeapi.Rule{{Name: "warn", When: fakeapi.Match{PromptContains: "NEARLIMIT"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("ok, but close to the limit")}, Headers: headers}}}},
			claudetest.WithOAuthToken("sk-ant-oat01-fake")))
		in := r.say(chat, alice, "NEARLIMIT please")
		m := r.finalAnswer(chat, in.ID, "close to the limit")
		assert.Contains(t, m.Text, "⚠️ Approaching the 5-hour limit: 91% used")
		assert.False(t, strings.Contains(m.Text, "7-day"), "a window that is fine is not mentioned")
	})
}

// A refused tool call is named in the answer with why it was refused
// (issue 8 §6): from tool_result_meta and result.permission_denials, and
// an approval nobody answered is not put down to the user.
func TestRefusedToolCallSaysWhy(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	t.Run("denied by you", func(t *testing.T) {
		r := newRig(t)
		in := r.say(chat, alice, "BASHRUN please")
		ap := r.approvalMessage(chat, "out.txt")
		r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Deny"))
		m := r.finalAnswer(chat, in.ID, "The command ran.")
		assert.Contains(t, m.Text, "🚫 Bash echo hi > out.txt: denied by you")
		assert.NoFileExists(t, r.claude.Workdir+"/out.txt")
	})
	t.Run("expired", func(t *testing.T) {
		r := newRig(t, withConfig(func(c *config.Config) { c.Claude.ApprovalTimeout = config.Duration(time.Second) }))
		in := r.say(chat, alice, "BASHRUN please")
		m := r.finalAnswer(chat, in.ID, "The command ran.")
		assert.Contains(t, m.Text, "🚫 Bash echo hi > out.txt: denied: nobody answered in time")
		assert.NotContains(t, m.Text, "denied by you")
	})
}

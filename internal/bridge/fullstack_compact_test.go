package bridge_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// fillScript answers "FILL<n>." with a usage of n thousand input tokens,
// as if the conversation filled that much of the 1M window, and the
// CLI's compaction request with a short summary.
func fillScript(fills ...int) fakeapi.Script {
	rules := []fakeapi.Rule{{Name: "compact", When: fakeapi.Match{PromptContains: "CRITICAL: Respond with TEXT ONLY"},
		Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("<summary>We filled the context.</summary>")},
			Usage: map[string]any{"input_tokens": 5000}}}}}
	for _, k := range fills {
		rules = append(rules, fakeapi.Rule{Name: fmt.Sprintf("fill%d", k), When: fakeapi.Match{PromptContains: fmt.Sprintf("FILL%d.", k)},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(fmt.Sprintf("filled %dk", k))},
				Usage: map[string]any{"input_tokens": k * 1000}}}})
	}
	return fakeapi.Script{Rules: rules}
}

func withFillScript(opts ...claudetest.Option) rigOption {
	return func(r *rig) { r.claude = claudetest.New(r.t, fillScript(500, 850, 960), opts...) }
}

// fill sends FILL<k>. and returns its answer.
func (r *rig) fill(chat telegramtest.ChatID, k int) telegramtest.Message {
	r.t.Helper()
	in := r.say(chat, alice, fmt.Sprintf("FILL%d.", k))
	return r.waitBot(chat, "answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, fmt.Sprintf("filled %dk", k)) && strings.Contains(m.Text, "⏱")
	})
}

// TestContextFillsUp: below render.context_warn_at the footer shows the
// plain share; at it, a warning and 🗜 Compact, whose press sends /compact
// to the session: the CLI compacts (the fake API gets its compaction
// request) and the chat is told the tokens before and after. At
// context_full_at the answer says what the CLI does next, as the CLI
// itself reported it (it compacts by itself at about 97 %).
func TestContextFillsUp(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withFillScript())

	low := r.fill(chat, 500)
	assert.Contains(t, low.Text, "ctx 50% ·")
	assert.Empty(t, low.ButtonData(render.CompactButtonText), "no Compact below the warning")

	warn := r.fill(chat, 850)
	assert.Contains(t, warn.Text, "ctx 85% ⚠️")
	assert.NotContains(t, warn.Text, "The context is", "the note waits for context_full_at")
	compact := buttonData(warn, render.CompactButtonText)
	require.NotEmpty(t, compact, "🗜 Compact under the answer")
	// The warning made untether ask the CLI (off the actor) how it compacts.
	require.Eventually(t, func() bool { return len(r.logLines("the CLI says how it compacts")) == 1 }, wait, 20*time.Millisecond)

	full := r.fill(chat, 960)
	assert.Contains(t, full.Text, "ctx 96% ⚠️")
	assert.Contains(t, full.Text, "⚠️ The context is 96% full. Claude Code compacts it by itself at about 97%, or when a message no longer fits, keeping a summary.",
		"what the CLI said (get_context_usage) when the context first reached the warning")
	latest := buttonData(full, render.CompactButtonText)
	require.NotEmpty(t, latest)

	q := r.tg.UserPresses(chat, warn.ID, compact)
	assert.Equal(t, "This 🗜 Compact button is no longer current. Send /compact to compact now.", r.answerOf(q).Text,
		"only the latest answer's button is live")
	assert.Zero(t, r.compactions(), "and it compacted nothing")

	q = r.tg.UserPresses(chat, full.ID, latest)
	assert.Equal(t, "Compacting…", r.answerOf(q).Text)
	done := r.waitBot(chat, "compact notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == full.ID && strings.Contains(m.Text, "🗜 Conversation compacted")
	})
	assert.Regexp(t, `Conversation compacted: 96\d\.\dk → \d+(\.\d)?k tokens`, done.Text)
	assert.Equal(t, 1, r.compactions(), "the CLI compacted, once")
	assert.Empty(t, done.ButtonData(render.CompactButtonText), "a compacted context offers no Compact")
	q = r.tg.UserPresses(chat, full.ID, latest)
	assert.Contains(t, r.answerOf(q).Text, "no longer current", "a button works once")
}

// compactions counts the compaction requests the fake API answered.
func (r *rig) compactions() int {
	n := 0
	for _, c := range r.claude.API.ModelCalls() {
		if strings.Contains(string(c.Body), "CRITICAL: Respond with TEXT ONLY") {
			n++
		}
	}
	return n
}

// TestContextFullWithCompactionOff: with DISABLE_COMPACT in the CLI's env,
// /compact does not work, so no answer offers it, and a full context says
// that the turn that no longer fits fails; with only DISABLE_AUTO_COMPACT,
// the button stays and the note says the CLI will not compact by itself.
func TestContextFullWithCompactionOff(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	for _, tc := range []struct {
		env, note string
		button    bool
	}{
		{"DISABLE_COMPACT", "⚠️ The context is 96% full. Compaction is off here: once a message no longer fits, the turn fails. Start over with /new.", false},
		{"DISABLE_AUTO_COMPACT", "⚠️ The context is 96% full. Automatic compaction is off: once a message no longer fits, the turn fails. Compact now, or start over with /new.", true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			r := newRig(t, withFillScript(claudetest.WithVar(tc.env, "1")))
			warn := r.fill(chat, 850)
			assert.Contains(t, warn.Text, "ctx 85% ⚠️")
			assert.Equal(t, tc.button, buttonData(warn, render.CompactButtonText) != "")
			full := r.fill(chat, 960)
			assert.Contains(t, full.Text, tc.note)
			assert.Equal(t, tc.button, buttonData(full, render.CompactButtonText) != "")
		})
	}
}

// TestCompactAfterNewCompactsNothing: a 🗜 Compact pressed after /new
// belongs to the session before it; it compacts nothing (no CLI is started
// for it) and says so.
func TestCompactAfterNewCompactsNothing(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withFillScript())
	warn := r.fill(chat, 850)
	compact := buttonData(warn, render.CompactButtonText)
	require.NotEmpty(t, compact)
	r.command(chat, "/new", "New session")
	r.tg.UserPresses(chat, warn.ID, compact)
	r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == warn.ID && strings.Contains(m.Text, "was for an earlier session, so nothing was compacted")
	})
	time.Sleep(300 * time.Millisecond) // a /compact, had it gone, would be on its way
	assert.Zero(t, r.compactions(), "nothing compacted")
}

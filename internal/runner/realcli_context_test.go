package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// contextScript answers "FILL<n>" with a usage of n thousand input tokens,
// as if the conversation filled that much of the window; "OVERFLOW" once
// with the API's 400 for a prompt that no longer fits; and the CLI's
// compaction request with a summary.
func contextScript(fills ...int) fakeapi.Script {
	rules := []fakeapi.Rule{
		{Name: "compact", When: fakeapi.Match{PromptContains: "CRITICAL: Respond with TEXT ONLY"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("<summary>We filled the context.</summary>")},
				Usage: map[string]any{"input_tokens": 5000}}}},
		{Name: "overflow", When: fakeapi.Match{PromptContains: "OVERFLOW"}, Once: true,
			Replies: []fakeapi.Reply{{Status: 400, ErrorType: "invalid_request_error",
				ErrorMessage: "prompt is too long: 1010000 tokens > 1000000 maximum"}}},
	}
	for _, k := range fills {
		rules = append(rules, fakeapi.Rule{Name: fmt.Sprintf("fill%d", k), When: fakeapi.Match{PromptContains: fmt.Sprintf("FILL%d.", k)},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(fmt.Sprintf("filled %dk", k))},
				Usage: map[string]any{"input_tokens": k * 1000}}}})
	}
	return fakeapi.Script{Rules: rules}
}

// TestRealCLIContextPercentFromUsage: a large input_tokens in the API's
// usage becomes the turn's ContextPercent against the model's window
// (1,000,000 tokens for the default model), and get_context_usage reports
// the same fill and where the CLI compacts by itself.
func TestRealCLIContextPercentFromUsage(t *testing.T) {
	r := newRealSessionWith(t, contextScript(850), nil)
	send(t, r.s, "FILL850.")
	ev, _ := r.log.waitFor(t, 0, "answer", answerIs("filled 850k"))
	tc := ev.(TurnCompleted)
	assert.Equal(t, int64(1_000_000), tc.ContextWindow)
	assert.GreaterOrEqual(t, tc.ContextTokens, int64(850_000))
	assert.Less(t, tc.ContextTokens, int64(850_100), "input plus the few output tokens")
	assert.InDelta(t, 85.0, tc.ContextPercent, 0.01)

	u, err := r.s.ContextUsage(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1_000_000), u.Window)
	assert.InDelta(t, 850_000, u.Tokens, 100)
	assert.InDelta(t, 85, u.Percent, 0.5)
	assert.True(t, u.AutoCompact)
	// window − 20,000 (room for the answer) − 13,000 (the CLI's margin)
	assert.Equal(t, int64(967_000), u.AutoCompactAt)
	assert.InDelta(t, 96.7, u.AutoCompactPercent(), 1e-9)
}

// compactedBefore waits for answer from event index from, and reports the
// compaction that finished before it, if any, and the index to go on from.
func compactedBefore(t *testing.T, r *realRig, from int, answer string) (CompactionFinished, bool, int) {
	t.Helper()
	_, end := r.log.waitFor(t, from, "answer "+answer, answerIs(answer))
	for i, ev := range r.log.snapshot()[from:end] {
		if f, ok := ev.(CompactionFinished); ok {
			return f, true, from + i
		}
	}
	return CompactionFinished{}, false, end + 1
}

// TestRealCLIAutoCompactsNearlyFull records where the CLI compacts by
// itself: before sending the next prompt, once the last request held
// 977,000 tokens of the 1,000,000 window (97.7 %); at 976,000 it does not.
// get_context_usage calls its threshold 967,000: the count the CLI checks
// is some 10,000 tokens below the API's usage, so the footer's "about 97 %"
// holds either way.
func TestRealCLIAutoCompactsNearlyFull(t *testing.T) {
	r := newRealSessionWith(t, contextScript(976, 977), nil)
	send(t, r.s, "FILL976.")
	_, i := r.log.waitFor(t, 0, "answer", answerIs("filled 976k"))
	send(t, r.s, "after 976")
	_, compacted, i := compactedBefore(t, r, i+1, "echo: after 976")
	assert.False(t, compacted, "no compaction at 97.6 %")

	send(t, r.s, "FILL977.")
	_, i = r.log.waitFor(t, i, "answer", answerIs("filled 977k"))
	send(t, r.s, "after 977")
	f, compacted, _ := compactedBefore(t, r, i+1, "echo: after 977")
	require.True(t, compacted, "compaction at 97.7 %")
	assert.Equal(t, "auto", f.Trigger)
	assert.GreaterOrEqual(t, f.PreTokens, int64(977_000))
	assert.Less(t, f.PostTokens, int64(20_000))
}

// TestRealCLITooLongPrompt: when the API refuses a prompt as too long, a
// CLI with auto-compaction compacts and sends it again (the turn
// succeeds); with DISABLE_AUTO_COMPACT the turn fails, and
// get_context_usage says compaction is off.
func TestRealCLITooLongPrompt(t *testing.T) {
	t.Run("auto-compact on", func(t *testing.T) {
		r := newRealSessionWith(t, contextScript(900), nil)
		send(t, r.s, "FILL900.")
		_, i := r.log.waitFor(t, 0, "answer", answerIs("filled 900k"))
		send(t, r.s, "OVERFLOW")
		f, compacted, _ := compactedBefore(t, r, i+1, "echo: OVERFLOW")
		require.True(t, compacted, "compacted after the API's refusal")
		assert.Equal(t, "auto", f.Trigger)
	})
	t.Run("auto-compact off", func(t *testing.T) {
		r := newRealSessionWith(t, contextScript(900), nil, claudetest.WithVar("DISABLE_AUTO_COMPACT", "1"))
		send(t, r.s, "FILL900.")
		_, i := r.log.waitFor(t, 0, "answer", answerIs("filled 900k"))
		u, err := r.s.ContextUsage(context.Background())
		require.NoError(t, err)
		assert.False(t, u.AutoCompact)
		assert.Zero(t, u.AutoCompactPercent())

		send(t, r.s, "OVERFLOW")
		ev, end := r.log.waitFor(t, i+1, "failed turn", turnDone)
		tc := ev.(TurnCompleted)
		assert.False(t, tc.OK)
		assert.Equal(t, "prompt_too_long", tc.TerminalReason)
		assert.Equal(t, 400, tc.APIErrorStatus)
		assert.Equal(t, "Prompt is too long", tc.Answer)
		for _, ev := range r.log.snapshot()[i+1 : end] {
			assert.False(t, is[CompactionStarted](ev), "no compaction when it is off")
		}
	})
}

package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

var footerMeta = render.FinalMeta{Duration: 12 * time.Second, CostUSD: 0.0042, ContextPercent: 3.2, Model: "claude-opus-5-5"}

const wantFooter = "⏱ 12s · $0.0042 · ctx 3% · claude-opus-5-5"

// longAnswer is a realistic 12,000-character Markdown answer: prose, lists
// and code blocks, so the splitter has to close and reopen tags.
func longAnswer() string {
	var b strings.Builder
	for i := 0; b.Len() < 12_000; i++ {
		fmt.Fprintf(&b, "## Step %d\n\nThe **renderer** turns `Markdown` into Telegram HTML; <tags> & ampersands are escaped.\n\n", i)
		b.WriteString("- first point with *emphasis*\n- second point with a [link](https://go.dev/doc)\n\n")
		b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"<hello & goodbye>\")\n}\n```\n\n")
	}
	return b.String()
}

func finalCases() []struct {
	name string
	tc   runner.TurnCompleted
	meta render.FinalMeta
} {
	ok := func(answer string) runner.TurnCompleted {
		return runner.TurnCompleted{OK: true, Subtype: "success", TerminalReason: "completed", StopReason: "end_turn", Answer: answer,
			CostUSD: 0.0042, ContextPercent: 3.2, Duration: 12 * time.Second}
	}
	return []struct {
		name string
		tc   runner.TurnCompleted
		meta render.FinalMeta
	}{
		{"simple", ok("The command **finished**; I saw its result:\n\n```\nhi\n```"), footerMeta},
		{"empty-answer", ok(""), footerMeta},
		{"whitespace-answer", ok(" \n\n "), render.FinalMeta{}},
		{"hostile", ok(hostile + "\n\n`" + hostile + "`"), render.FinalMeta{Model: hostile}},
		{"long-answer", ok(longAnswer()), footerMeta},
		{"footer-from-result", ok("ok"), render.FinalMeta{Model: "claude-opus-5-5"}},
		{"no-footer", runner.TurnCompleted{OK: true, Answer: "ok"}, render.FinalMeta{}},
		{"cancelled", runner.TurnCompleted{OK: false, Subtype: "error_during_execution", TerminalReason: "aborted_streaming",
			Errors: []string{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"}, CostUSD: 0.00426, Duration: 1129 * time.Millisecond}, render.FinalMeta{}},
		{"cancelled-with-partial", runner.TurnCompleted{OK: false, TerminalReason: "aborted_tools", Answer: "I was halfway through **this**"}, footerMeta},
		{"overloaded-529", runner.TurnCompleted{OK: false, Subtype: "success", TerminalReason: "api_error", StopReason: "stop_sequence",
			Answer:         "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:37639).",
			APIErrorStatus: 529, Duration: 4523 * time.Millisecond}, render.FinalMeta{Model: "claude-opus-5-5"}},
		{"usage-limit-429", runner.TurnCompleted{OK: false, Subtype: "success", TerminalReason: "api_error", StopReason: "stop_sequence",
			Answer: "You've hit your 5-hour limit · resets 3:18am (UTC)", APIErrorStatus: 429, APIError: "usage_limit_reached",
			Duration: 244 * time.Millisecond}, render.FinalMeta{}},
		{"rate-limit-429", runner.TurnCompleted{OK: false, TerminalReason: "api_error",
			Answer:         `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			APIErrorStatus: 429}, render.FinalMeta{}},
		{"auth-401", runner.TurnCompleted{OK: false, TerminalReason: "api_error",
			Answer:         `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}} · Please run /login`,
			APIErrorStatus: 401}, render.FinalMeta{}},
		{"refusal", runner.TurnCompleted{OK: false, Subtype: "success", TerminalReason: "api_error", StopReason: "refusal",
			Answer:  "API Error: Opus 5.5's safeguards flagged this message (https://www.anthropic.com/legal/aup). This sometimes happens with safe, normal conversations. Claude Code can't respond to this message with Opus 5.5.\n\nTry rephrasing the request in a new session or change your model.\n\nRequest ID: req_fake000002",
			CostUSD: 0.00804}, render.FinalMeta{}},
		{"max-turns", runner.TurnCompleted{OK: false, Subtype: "error_max_turns", TerminalReason: "max_turns", NumTurns: 30,
			Errors: []string{"Reached maximum number of turns (30)"}, CostUSD: 0.0077}, render.FinalMeta{}},
		{"connection-refused", runner.TurnCompleted{OK: false, TerminalReason: "api_error", APIError: "connection_failed",
			Answer: "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"}, render.FinalMeta{}},
		{"no-conversation", runner.TurnCompleted{OK: false, Subtype: "error_during_execution",
			Errors: []string{"No conversation found with session ID: 00000000-0000-4000-8000-000000000000"}}, render.FinalMeta{}},
		{"generic-500", runner.TurnCompleted{OK: false, TerminalReason: "api_error", APIErrorStatus: 500,
			Answer: `API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error <oops>"}}`}, render.FinalMeta{}},
		{"error-huge-text", runner.TurnCompleted{OK: false, Errors: []string{strings.Repeat(hostile, 400)}}, render.FinalMeta{}},
	}
}

func TestFinalGolden(t *testing.T) {
	for _, tc := range finalCases() {
		t.Run(tc.name, func(t *testing.T) {
			chunks := render.RenderFinal(tc.tc, tc.meta)
			require.NotEmpty(t, chunks)
			checkRenderGolden(t, "final", tc.name, formatFinal(t, chunks))
		})
	}
}

// TestFinalTranscripts renders the result of every turn of some captures.
func TestFinalTranscripts(t *testing.T) {
	for _, name := range []string{"c1-bash-allow", "e2-529-always-max-retries-3", "e4-api-unreachable-connection-refused",
		"f3-429-unified-headers-oauth-token", "j3-refusal-always", "s3-uuid-command-lifecycle-queue-interrupt", "g-compact"} {
		t.Run(name, func(t *testing.T) {
			var all []string
			for _, te := range transcriptEvents(t, name) {
				if tc, ok := te.ev.(runner.TurnCompleted); ok {
					all = append(all, fmt.Sprintf("══ line %d ══\n", te.line)+formatFinal(t, render.RenderFinal(tc, render.FinalMeta{Model: "claude-opus-5-5"})))
				}
			}
			require.NotEmpty(t, all)
			checkRenderGolden(t, "final", "transcript-"+name, strings.Join(all, ""))
		})
	}
}

func formatFinal(t *testing.T, chunks []string) string {
	t.Helper()
	var b strings.Builder
	for i, c := range chunks {
		checkMessage(t, c)
		fmt.Fprintf(&b, "── chunk %d/%d · %d visible ──\n%s\n", i+1, len(chunks), render.VisibleLen(c), c)
	}
	return b.String()
}

func TestFinalLongAnswerSplit(t *testing.T) {
	answer := longAnswer()
	chunks := render.RenderFinal(runner.TurnCompleted{OK: true, Answer: answer}, footerMeta)
	require.Greater(t, len(chunks), 2)
	var plain strings.Builder
	for i, c := range chunks {
		checkMessage(t, c)
		hasFooter := strings.HasSuffix(c, "\n\n"+wantFooter)
		assert.Equal(t, i == len(chunks)-1, hasFooter, "footer only on the last chunk (chunk %d)", i)
		plain.WriteString(strings.TrimSuffix(render.HTMLToPlain(c), wantFooter))
	}
	// No text is lost or duplicated by the split.
	assert.Equal(t, stripSpace(render.HTMLToPlain(render.MarkdownToHTML(answer))), stripSpace(plain.String()))
}

// TestFinalFooterNeedsRoom: when the last chunk is too full for the footer,
// it is split again rather than pushed over the limit.
func TestFinalFooterNeedsRoom(t *testing.T) {
	for _, n := range []int{render.SafeChunkLimit - 60, render.SafeChunkLimit - 10, render.SafeChunkLimit, render.SafeChunkLimit + 1, 2*render.SafeChunkLimit - 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			words := strings.Repeat("word ", n/5+1)[:n]
			chunks := render.RenderFinal(runner.TurnCompleted{OK: true, Answer: words}, footerMeta)
			for _, c := range chunks {
				checkMessage(t, c)
			}
			assert.True(t, strings.HasSuffix(chunks[len(chunks)-1], wantFooter))
			var plain strings.Builder
			for _, c := range chunks {
				plain.WriteString(strings.TrimSuffix(render.HTMLToPlain(c), wantFooter))
			}
			assert.Equal(t, stripSpace(words), stripSpace(plain.String()))
		})
	}
}

func TestFinalErrorKinds(t *testing.T) {
	tests := []struct {
		name string
		tc   runner.TurnCompleted
		want string // in the bold title
	}{
		{"529 status", runner.TurnCompleted{APIErrorStatus: 529}, "Claude is overloaded"},
		{"overloaded text", runner.TurnCompleted{Answer: "API Error: Overloaded"}, "Claude is overloaded"},
		{"usage limit kind", runner.TurnCompleted{APIErrorStatus: 429, APIError: "usage_limit_reached"}, "Usage limit reached"},
		{"usage limit text with reset", runner.TurnCompleted{Answer: "You've hit your weekly limit · resets Oct 3, 9am (Europe/Berlin)"}, "Usage limit reached · resets Oct 3, 9am (Europe/Berlin)"},
		{"429", runner.TurnCompleted{APIErrorStatus: 429}, "Rate limited"},
		{"401", runner.TurnCompleted{APIErrorStatus: 401}, "Authentication failed"},
		{"403", runner.TurnCompleted{APIErrorStatus: 403}, "Authentication failed"},
		{"authentication text", runner.TurnCompleted{Answer: "Invalid API key · Please run /login"}, "Authentication failed"},
		{"refusal stop reason", runner.TurnCompleted{StopReason: "refusal"}, "Claude declined to respond"},
		{"refusal terminal reason", runner.TurnCompleted{TerminalReason: "refusal"}, "Claude declined to respond"},
		{"max turns", runner.TurnCompleted{Subtype: "error_max_turns", NumTurns: 5}, "Stopped at the maximum number of turns (5)"},
		{"budget", runner.TurnCompleted{Subtype: "error_max_budget_usd"}, "Budget limit reached"},
		{"connection", runner.TurnCompleted{APIError: "connection_failed"}, "Cannot reach the Claude API"},
		{"prompt too long", runner.TurnCompleted{Answer: "Prompt is too long"}, "The conversation is too long"},
		{"unknown", runner.TurnCompleted{Answer: "something odd"}, "Claude reported an error"},
		{"unknown with status", runner.TurnCompleted{APIErrorStatus: 502}, "Claude reported an error (502)"},
		{"interrupted wins", runner.TurnCompleted{TerminalReason: "aborted_streaming", APIErrorStatus: 529}, "Stopped."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := render.RenderFinal(tt.tc, render.FinalMeta{})
			require.Len(t, chunks, 1)
			checkMessage(t, chunks[0])
			title, _, _ := strings.Cut(strings.TrimPrefix(chunks[0], "<b>"), "</b>")
			assert.Contains(t, title, tt.want)
			assert.NotContains(t, chunks[0], "{&quot;", "no raw JSON")
			assert.NotContains(t, chunks[0], "ede_diagnostic")
		})
	}
}

func TestRenderCrash(t *testing.T) {
	tests := []struct {
		name string
		exit runner.ProcessExited
	}{
		{"exit-code", runner.ProcessExited{ExitCode: 1, StderrTail: "Error: <boom> & bust\n    at main (cli.js:1:1)\n"}},
		{"signal", runner.ProcessExited{ExitCode: -1, Signal: "killed"}},
		{"huge-stderr", runner.ProcessExited{ExitCode: 137, StderrTail: strings.Repeat("line of noise <x>\n", 500) + "the actual error"}},
	}
	var b strings.Builder
	for _, tt := range tests {
		got := render.RenderCrash(tt.exit)
		checkMessage(t, got)
		assert.Contains(t, got, "your next message resumes the session")
		fmt.Fprintf(&b, "── %s · %d visible ──\n%s\n", tt.name, render.VisibleLen(got), got)
	}
	assert.Contains(t, render.RenderCrash(tests[2].exit), "the actual error", "the end of stderr is kept")
	checkRenderGolden(t, "final", "crash", b.String())
}

package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// These tests drive the real, pinned Claude Code CLI against the in-repo
// fake Anthropic API on 127.0.0.1 (claudetest sets the offline environment).
// They skip loudly when the CLI is not installed; the README's test command
// installs it and sets UNTETHER_REQUIRE_REAL_CLAUDE=1 so they never skip.

// realScript answers by marker words in the user's prompt.
func realScript() fakeapi.Script {
	var rules []fakeapi.Rule
	rules = append(rules, fakeapi.ToolTurn("ESCAPE", "Bash", map[string]any{"command": escapeCommand, "description": "Start a background server"}, "Started it.")...)
	rules = append(rules, fakeapi.ToolTurn("BASHRUN", "Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"}, "The command ran.")...)
	rules = append(rules,
		fakeapi.Rule{Name: "compact", When: fakeapi.Match{PromptContains: "CRITICAL: Respond with TEXT ONLY"},
			Replies: []fakeapi.Reply{fakeapi.Text("<summary>We talked about apples.</summary>")}},
		fakeapi.Rule{Name: "slow", When: fakeapi.Match{PromptContains: "SLOW"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(strings.Repeat("slow answer ", 200))}, ChunkDelayMs: 100}}},
		fakeapi.Rule{Name: "retry", When: fakeapi.Match{PromptContains: "RETRY"}, Once: true,
			Replies: []fakeapi.Reply{fakeapi.Error(529), fakeapi.Error(529), fakeapi.Text("made it after retries")}},
		fakeapi.Rule{Name: "refuse", When: fakeapi.Match{AnyUserContains: "REFUSE"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock("I won't")}, StopReason: "refusal"}}},
	)
	rules = append(rules, fakeapi.PlanTurn("PLANIT")...)
	rules = append(rules, fakeapi.AskTurn("ASKME")...)
	return fakeapi.Script{Rules: rules}
}

type realRig struct {
	env *claudetest.Env
	s   *Session
	log *eventLog
}

func newRealSession(t *testing.T, mutate func(*Config), opts ...claudetest.Option) *realRig {
	t.Helper()
	return newRealSessionWith(t, realScript(), mutate, opts...)
}

// newRealSessionWith is newRealSession with the fake API's script.
func newRealSessionWith(t *testing.T, script fakeapi.Script, mutate func(*Config), opts ...claudetest.Option) *realRig {
	t.Helper()
	env := claudetest.New(t, script, opts...)
	cfg := Config{
		Binary: env.Binary, Workdir: env.Workdir, Env: env.Vars,
		InheritEnv: []string{"PATH=" + os.Getenv("PATH")}, StopTimeout: 10 * time.Second,
		Logger: zerolog.New(zerolog.NewTestWriter(t)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, log := startSession(t, cfg)
	return &realRig{env: env, s: s, log: log}
}

func answerIs(text string) func(Event) bool {
	return func(ev Event) bool { tc, ok := ev.(TurnCompleted); return ok && tc.Answer == text }
}

func approvalFor(tool string) func(Event) bool {
	return func(ev Event) bool { a, ok := ev.(ApprovalRequested); return ok && a.Tool == tool }
}

func TestRealCLITextTurnsOnOneProcess(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "hello there")
	ev, i := r.log.waitFor(t, 0, "first answer", turnDone)
	tc := ev.(TurnCompleted)
	assert.True(t, tc.OK)
	assert.Equal(t, "echo: hello there", tc.Answer)
	assert.Greater(t, tc.CostUSD, 0.0)
	assert.Greater(t, tc.ContextPercent, 0.0)
	assert.Equal(t, r.s.ID(), tc.SessionID, "the CLI uses the id we chose with --session-id")
	start, _ := r.log.waitFor(t, 0, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
	assert.Equal(t, claudetest.WantVersion(), start.(TurnStarted).Version)
	assert.Equal(t, r.env.Workdir, start.(TurnStarted).Cwd)

	send(t, r.s, "second message")
	ev, _ = r.log.waitFor(t, i+1, "second answer", turnDone)
	tc2 := ev.(TurnCompleted)
	assert.Equal(t, "echo: second message", tc2.Answer)
	assert.InDelta(t, tc.CostUSD, tc2.CostUSD, tc.CostUSD, "per-turn cost, not the cumulative total")
	assert.Greater(t, tc2.TotalCostUSD, tc2.CostUSD)
	starts := 0
	r.log.mu.Lock()
	for _, ev := range r.log.events {
		if is[ProcessStarted](ev) {
			starts++
		}
	}
	r.log.mu.Unlock()
	assert.Equal(t, 1, starts, "both turns ran on one process")
	assert.Equal(t, StateIdle, r.s.State())
}

func TestRealCLIBashApproval(t *testing.T) {
	t.Run("allow runs the command", func(t *testing.T) {
		r := newRealSession(t, nil)
		send(t, r.s, "BASHRUN please")
		ev, _ := r.log.waitFor(t, 0, "approval", approvalFor("Bash"))
		req := ev.(ApprovalRequested)
		assert.Equal(t, "echo hi > out.txt", req.Summary)
		assert.NotEmpty(t, req.Suggestions)
		require.NoError(t, r.s.Respond(req.RequestID, Decision{Behavior: Allow}))
		ev, _ = r.log.waitFor(t, 0, "answer", turnDone)
		assert.Equal(t, "The command ran.", ev.(TurnCompleted).Answer)
		got, err := os.ReadFile(filepath.Join(r.env.Workdir, "out.txt"))
		require.NoError(t, err, "the allowed command really ran")
		assert.Equal(t, "hi\n", string(got))
		fin, _ := r.log.waitFor(t, 0, "tool finished", func(ev Event) bool { return is[ToolFinished](ev) })
		assert.True(t, fin.(ToolFinished).OK)
		assert.Equal(t, "Bash", fin.(ToolFinished).Name)
	})
	t.Run("deny tells the model", func(t *testing.T) {
		r := newRealSession(t, nil)
		send(t, r.s, "BASHRUN please")
		ev, _ := r.log.waitFor(t, 0, "approval", approvalFor("Bash"))
		require.NoError(t, r.s.Respond(ev.(ApprovalRequested).RequestID, Decision{Behavior: Deny, Message: "not today"}))
		ev, _ = r.log.waitFor(t, 0, "answer", turnDone)
		tc := ev.(TurnCompleted)
		assert.True(t, tc.OK)
		require.Len(t, tc.Denials, 1)
		assert.Equal(t, "Bash", tc.Denials[0].ToolName)
		assert.NoFileExists(t, filepath.Join(r.env.Workdir, "out.txt"))
		fin, _ := r.log.waitFor(t, 0, "tool finished", func(ev Event) bool { return is[ToolFinished](ev) })
		assert.False(t, fin.(ToolFinished).OK)
		assert.Contains(t, fin.(ToolFinished).Preview, "not today")
	})
	t.Run("deny with interrupt ends the turn", func(t *testing.T) {
		r := newRealSession(t, nil)
		send(t, r.s, "BASHRUN please")
		ev, _ := r.log.waitFor(t, 0, "approval", approvalFor("Bash"))
		require.NoError(t, r.s.Respond(ev.(ApprovalRequested).RequestID, Decision{Behavior: Deny, Message: "stop", Interrupt: true}))
		ev, _ = r.log.waitFor(t, 0, "answer", turnDone)
		tc := ev.(TurnCompleted)
		assert.False(t, tc.OK)
		assert.Equal(t, "aborted_tools", tc.TerminalReason)
		assert.True(t, tc.Aborted())
		calls := len(r.env.API.ModelCalls())
		assert.Equal(t, 1, calls, "no further API call after an interrupting deny")
	})
}

func TestRealCLIInterrupt(t *testing.T) {
	t.Run("while streaming", func(t *testing.T) {
		r := newRealSession(t, nil)
		send(t, r.s, "SLOW please")
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_, err := r.env.API.WaitForModelCalls(ctx, 1)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return r.s.State() == StateBusy }, waitLimit, 10*time.Millisecond)
		require.NoError(t, r.s.Interrupt(ctx))
		ev, i := r.log.waitFor(t, 0, "aborted turn", turnDone)
		assert.Equal(t, "aborted_streaming", ev.(TurnCompleted).TerminalReason)
		// The process survives an interrupt and takes the next message.
		send(t, r.s, "after the interrupt")
		r.log.waitFor(t, i+1, "next answer", answerIs("echo: after the interrupt"))
	})
	t.Run("with an approval pending", func(t *testing.T) {
		r := newRealSession(t, nil)
		send(t, r.s, "BASHRUN please")
		ev, _ := r.log.waitFor(t, 0, "approval", approvalFor("Bash"))
		req := ev.(ApprovalRequested)
		require.NoError(t, r.s.Interrupt(context.Background()))
		w, _ := r.log.waitFor(t, 0, "withdrawn", func(ev Event) bool { return is[ApprovalWithdrawn](ev) })
		assert.Equal(t, req.RequestID, w.(ApprovalWithdrawn).RequestID)
		ev, _ = r.log.waitFor(t, 0, "aborted turn", turnDone)
		assert.Equal(t, "aborted_tools", ev.(TurnCompleted).TerminalReason)
		assert.ErrorIs(t, r.s.Respond(req.RequestID, Decision{Behavior: Allow}), ErrUnknownRequest, "a withdrawn request cannot be answered")
		assert.Empty(t, r.s.PendingApprovals())
	})
}

func TestRealCLISetPermissionMode(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "hi")
	r.log.waitFor(t, 0, "answer", turnDone)
	require.NoError(t, r.s.SetPermissionMode(context.Background(), ModeAcceptEdits))
	ev, _ := r.log.waitFor(t, 0, "mode change", func(ev Event) bool { return is[PermissionModeChanged](ev) })
	assert.Equal(t, ModeAcceptEdits, ev.(PermissionModeChanged).Mode)
	n := r.log.len()
	send(t, r.s, "next turn")
	ev, _ = r.log.waitFor(t, n, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
	assert.Equal(t, ModeAcceptEdits, ev.(TurnStarted).PermissionMode)
}

func TestRealCLIAPIRetries(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "RETRY please")
	ev, _ := r.log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "made it after retries", ev.(TurnCompleted).Answer)
	var retries []APIRetry
	r.log.mu.Lock()
	for _, ev := range r.log.events {
		if rt, ok := ev.(APIRetry); ok {
			retries = append(retries, rt)
		}
	}
	r.log.mu.Unlock()
	require.Len(t, retries, 2)
	assert.Equal(t, 1, retries[0].Attempt)
	assert.Equal(t, 2, retries[1].Attempt)
	assert.Equal(t, 529, retries[0].Status)
	assert.Positive(t, retries[0].MaxRetries)
	assert.Positive(t, retries[0].Delay)
}

func TestRealCLICompact(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "tell me about apples")
	_, i := r.log.waitFor(t, 0, "first answer", turnDone)
	send(t, r.s, "/compact")
	r.log.waitFor(t, i+1, "compaction started", func(ev Event) bool { return is[CompactionStarted](ev) })
	ev, _ := r.log.waitFor(t, i+1, "compaction finished", func(ev Event) bool { return is[CompactionFinished](ev) })
	cf := ev.(CompactionFinished)
	assert.Equal(t, "manual", cf.Trigger)
	assert.Positive(t, cf.PreTokens)
	ev, _ = r.log.waitFor(t, i+1, "compact result", turnDone)
	assert.True(t, ev.(TurnCompleted).LocalCommand)
}

func TestRealCLIRefusal(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "REFUSE please")
	ev, _ := r.log.waitFor(t, 0, "refusal notice", func(ev Event) bool {
		n, ok := ev.(Notice)
		return ok && n.Kind == NoticeRefusalNoFallback
	})
	assert.Equal(t, "claude-opus-5-5", ev.(Notice).OriginalModel)
	r.log.waitFor(t, 0, "safeguard notice", func(ev Event) bool { n, ok := ev.(Notice); return ok && n.Kind == NoticeSafeguard })
	ev, _ = r.log.waitFor(t, 0, "failed turn", turnDone)
	tc := ev.(TurnCompleted)
	assert.False(t, tc.OK)
	assert.Equal(t, "refusal", tc.StopReason)
}

func TestRealCLIPlanMode(t *testing.T) {
	r := newRealSession(t, func(c *Config) { c.PermissionMode = ModePlan })
	send(t, r.s, "PLANIT a button")
	ev, _ := r.log.waitFor(t, 0, "plan approval", approvalFor("ExitPlanMode"))
	req := ev.(ApprovalRequested)
	require.NotNil(t, req.Plan)
	assert.Contains(t, req.Plan.Plan, "Colour it blue.")
	assert.True(t, strings.HasPrefix(req.Plan.PlanFile, filepath.Join(r.env.Home, ".claude", "plans")), req.Plan.PlanFile)
	assert.True(t, req.Interactive)
	require.NoError(t, r.s.Respond(req.RequestID, Decision{Behavior: Allow}))
	mc, _ := r.log.waitFor(t, 0, "mode change", func(ev Event) bool { return is[PermissionModeChanged](ev) })
	assert.Equal(t, ModeDefault, mc.(PermissionModeChanged).Mode)
	ev, _ = r.log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "Plan approved; starting work.", ev.(TurnCompleted).Answer)
}

func TestRealCLIAskUserQuestion(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "ASKME which colour")
	ev, _ := r.log.waitFor(t, 0, "question", approvalFor("AskUserQuestion"))
	req := ev.(ApprovalRequested)
	require.Len(t, req.Questions, 1)
	q := req.Questions[0]
	assert.Equal(t, "Which colour should the button be?", q.Question)
	require.Len(t, q.Options, 2)
	assert.Equal(t, "Blue", q.Options[1].Label)

	var input map[string]any
	require.NoError(t, json.Unmarshal(req.Input, &input))
	input["answers"] = map[string]string{q.Question: q.Options[1].Label}
	updated, err := json.Marshal(input)
	require.NoError(t, err)
	require.NoError(t, r.s.Respond(req.RequestID, Decision{Behavior: Allow, UpdatedInput: updated}))
	ev, _ = r.log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "Thanks, going with your answer.", ev.(TurnCompleted).Answer)
	// The model received the answer in the tool result.
	calls := r.env.API.ModelCalls()
	last := calls[len(calls)-1]
	var found bool
	for _, tr := range last.ToolResults() {
		if strings.Contains(tr.Text, `"Which colour should the button be?"="Blue"`) {
			found = true
		}
	}
	assert.True(t, found, "tool results: %+v", last.ToolResults())
}

func TestRealCLISigkillThenResume(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "REMEMBER the word pineapple")
	_, i := r.log.waitFor(t, 0, "first answer", turnDone)
	started, _ := r.log.waitFor(t, 0, "process started", func(ev Event) bool { return is[ProcessStarted](ev) })
	id := r.s.ID()
	// A crash from outside, as the OOM killer would do it.
	require.NoError(t, syscall.Kill(started.(ProcessStarted).PID, syscall.SIGKILL))
	ev, _ := r.log.waitFor(t, i, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	assert.False(t, ev.(ProcessExited).Requested)
	assert.Equal(t, "killed", ev.(ProcessExited).Signal)

	send(t, r.s, "what was the word?")
	ev, _ = r.log.waitFor(t, i, "answer after resume", answerIs("echo: what was the word?"))
	assert.Equal(t, id, ev.(TurnCompleted).SessionID, "same session after the crash")
	ps, _ := r.log.waitFor(t, i, "resumed process", func(ev Event) bool { p, ok := ev.(ProcessStarted); return ok && p.Resumed })
	assert.NotEqual(t, started.(ProcessStarted).PID, ps.(ProcessStarted).PID)
	calls := r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("pineapple"), "history kept across the crash")
}

func TestRealCLIIdleCloseThenResume(t *testing.T) {
	r := newRealSession(t, func(c *Config) { c.IdleTimeout = 500 * time.Millisecond })
	send(t, r.s, "REMEMBER the word mango")
	ev, i := r.log.waitFor(t, 0, "idle close", func(ev Event) bool { return is[ProcessExited](ev) })
	pe := ev.(ProcessExited)
	assert.True(t, pe.Requested)
	assert.Equal(t, 0, pe.ExitCode)
	send(t, r.s, "and now?")
	r.log.waitFor(t, i, "answer after resume", answerIs("echo: and now?"))
	calls := r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("mango"), "history kept across the idle close")
}

func TestRealCLIUnknownResumeStartsFresh(t *testing.T) {
	env := claudetest.New(t, realScript())
	s, err := NewSession(Config{Binary: env.Binary, Workdir: env.Workdir, Env: env.Vars,
		InheritEnv: []string{"PATH=" + os.Getenv("PATH")}, Logger: zerolog.New(zerolog.NewTestWriter(t))},
		"00000000-0000-4000-8000-000000000000", true, 0)
	require.NoError(t, err)
	log := collect(s)
	closeAtEnd(t, s)
	send(t, s, "are you there?")
	ev, _ := log.waitFor(t, 0, "restart", func(ev Event) bool { return is[SessionRestarted](ev) })
	assert.Equal(t, SessionID("00000000-0000-4000-8000-000000000000"), ev.(SessionRestarted).Previous)
	log.waitFor(t, 0, "answer", answerIs("echo: are you there?"))
}

func TestRealCLIVersion(t *testing.T) {
	v, err := CLIVersion(context.Background(), claudetest.Binary(t))
	require.NoError(t, err)
	assert.Equal(t, claudetest.WantVersion(), v, "the binary is the version the run asked for")
	assert.Equal(t, claudetest.Version, TestedVersion, "one pin")
	_, err = CLIVersion(context.Background(), "/nonexistent/claude")
	assert.Error(t, err)
}

func TestRealCLIPrewarmThenTurn(t *testing.T) {
	r := newRealSession(t, nil)
	send(t, r.s, "REMEMBER kiwi")
	_, i := r.log.waitFor(t, 0, "first answer", turnDone)
	require.NoError(t, r.s.CloseProcess(context.Background()))
	r.log.waitFor(t, i, "closed", func(ev Event) bool { return is[ProcessExited](ev) })

	require.NoError(t, r.s.Prewarm(context.Background()), "initialize on a resumed process")
	assert.Equal(t, StateIdle, r.s.State())
	n := r.log.len()
	send(t, r.s, "still there?")
	ev, _ := r.log.waitFor(t, n, "answer", turnDone)
	assert.Equal(t, "echo: still there?", ev.(TurnCompleted).Answer)
	calls := r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("kiwi"), "the prewarmed process resumed the session")
}

package metrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
	svc "github.com/untether/untether/internal/service/metrics"
)

// TestAnswerOf: an answer's first part takes the latest result taken
// before it was queued and drops the older ones (turns that got no
// answer); its later parts, and an answer replayed after a restart, find
// none; another chat's results are its own.
func TestAnswerOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	k, other := outbox.ChatKey{Chat: 1}, outbox.ChatKey{Chat: 2}
	m := &Module{results: map[outbox.ChatKey][]time.Time{
		k:     {t0, t0.Add(time.Second), t0.Add(5 * time.Second)},
		other: {t0},
	}}
	took, ok := m.answerOf(outbox.Dispatch{Key: k, Queued: t0.Add(2 * time.Second)})
	assert.True(t, ok)
	assert.Equal(t, t0.Add(time.Second), took, "the latest result before the answer was queued")
	_, ok = m.answerOf(outbox.Dispatch{Key: k, Queued: t0.Add(2 * time.Second)})
	assert.False(t, ok, "the answer's second part")
	took, ok = m.answerOf(outbox.Dispatch{Key: k, Queued: t0.Add(5 * time.Second)})
	assert.True(t, ok)
	assert.Equal(t, t0.Add(5*time.Second), took, "the next turn's answer")
	_, ok = m.answerOf(outbox.Dispatch{Key: k, Queued: t0.Add(9 * time.Second)})
	assert.False(t, ok, "nothing left")
	assert.NotContains(t, m.results, k, "a chat without results keeps no entry")
	_, ok = m.answerOf(outbox.Dispatch{Key: other, Queued: t0})
	assert.True(t, ok)
}

func TestOutcome(t *testing.T) {
	m := &Module{}
	cases := []struct {
		name     string
		tc       runner.TurnCompleted
		rejected bool
		want     svc.Outcome
	}{
		{"answered", runner.TurnCompleted{OK: true}, false, svc.OutcomeAnswered},
		{"an error result", runner.TurnCompleted{Subtype: "error_during_execution"}, false, svc.OutcomeFailed},
		{"the spending cap", runner.TurnCompleted{Subtype: "error_max_budget_usd"}, false, svc.OutcomeLimited},
		{"a subscription limit", runner.TurnCompleted{APIErrorStatus: 429}, true, svc.OutcomeLimited},
		{"answered despite a rejection", runner.TurnCompleted{OK: true}, true, svc.OutcomeAnswered},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, m.outcome(tc.tc, tc.rejected)) })
	}
}

func TestDecision(t *testing.T) {
	for d, want := range map[state.Decision]svc.Decision{
		state.DecisionAllow: svc.DecisionApproved, state.DecisionAlways: svc.DecisionApproved,
		state.DecisionDeny: svc.DecisionDenied, state.DecisionAnswer: svc.DecisionAnswered,
		state.DecisionExpired: svc.DecisionExpired, state.DecisionWithdrawn: svc.DecisionStopped,
		state.DecisionInterrupted: svc.DecisionStopped, state.DecisionPending: svc.DecisionOther,
	} {
		assert.Equal(t, want, decision(d), string(d))
	}
}

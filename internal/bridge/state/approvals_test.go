package state_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func sampleApproval(token string, key state.ChatKey, created time.Time) state.Approval {
	return state.Approval{
		Token: token, Key: key, RequestID: "req-" + token, SessionID: "sess",
		Tool: "Bash", Summary: "rm -rf build", InputJSON: []byte(`{"command":"rm -rf build"}`),
		Suggestions: []byte(`[{"type":"addRules"}]`), CreatedAt: created, ExpiresAt: created.Add(10 * time.Minute),
	}
}

func TestPutGetApproval(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	a := sampleApproval("t1", state.ChatKey{Chat: 9, Thread: 2}, t0)
	require.NoError(t, s.PutApproval(ctx, a))

	got, err := s.GetApproval(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, a, got)

	_, err = s.GetApproval(ctx, "nope")
	assert.ErrorIs(t, err, state.ErrNotFound)

	err = s.PutApproval(ctx, sampleApproval("t1", state.ChatKey{Chat: 1}, t0))
	assert.ErrorIs(t, err, state.ErrExists)
	got, err = s.GetApproval(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, a, got, "a duplicate insert leaves the original alone")

	// Optional JSON may be absent and reads back as nil.
	bare := state.Approval{Token: "t2", Key: state.ChatKey{Chat: 9}, RequestID: "r2", CreatedAt: t0}
	require.NoError(t, s.PutApproval(ctx, bare))
	got, err = s.GetApproval(ctx, "t2")
	require.NoError(t, err)
	assert.Equal(t, bare, got)
}

func TestPutApprovalInvalid(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	base := sampleApproval("tok", state.ChatKey{Chat: 1}, t0)
	tests := []struct {
		name   string
		mutate func(*state.Approval)
	}{
		{"empty token", func(a *state.Approval) { a.Token = "" }},
		{"already decided", func(a *state.Approval) { a.Decision = state.DecisionAllow }},
		{"input not JSON", func(a *state.Approval) { a.InputJSON = []byte(`{"command":`) }},
		{"suggestions not JSON", func(a *state.Approval) { a.Suggestions = []byte(`nope`) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base
			tt.mutate(&a)
			assert.ErrorIs(t, s.PutApproval(ctx, a), state.ErrInvalid)
		})
	}
	pending, err := s.PendingApprovals(ctx)
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing invalid was stored")
}

func TestPutApprovalDefaultsCreatedAt(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	before := time.Now().Round(0)
	a := sampleApproval("t", state.ChatKey{Chat: 1}, time.Time{})
	require.NoError(t, s.PutApproval(ctx, a))
	got, err := s.GetApproval(ctx, "t")
	require.NoError(t, err)
	assert.False(t, got.CreatedAt.IsZero())
	assert.False(t, got.CreatedAt.Before(before))
}

func TestSetApprovalMessage(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	require.NoError(t, s.PutApproval(ctx, sampleApproval("t", state.ChatKey{Chat: 1}, t0)))
	require.NoError(t, s.SetApprovalMessage(ctx, "t", 4242))
	got, err := s.GetApproval(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, state.MessageID(4242), got.MessageID)

	assert.ErrorIs(t, s.SetApprovalMessage(ctx, "missing", 1), state.ErrNotFound)
}

func TestDecideApproval(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 1}
	require.NoError(t, s.PutApproval(ctx, sampleApproval("t", key, t0)))

	at := t0.Add(time.Minute)
	require.NoError(t, s.DecideApproval(ctx, "t", state.DecisionAllow, 77, at, "looks fine"))
	got, err := s.GetApproval(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, state.DecisionAllow, got.Decision)
	assert.Equal(t, state.UserID(77), got.DecidedBy)
	assert.Equal(t, at, got.DecidedAt)
	assert.Equal(t, "looks fine", got.Note)

	// A second decision of any kind loses and changes nothing.
	err = s.DecideApproval(ctx, "t", state.DecisionDeny, 88, at.Add(time.Second), "too late")
	assert.ErrorIs(t, err, state.ErrAlreadyDecided)
	assert.Contains(t, err.Error(), `already "allow"`)
	again, err := s.GetApproval(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, got, again)

	assert.ErrorIs(t, s.DecideApproval(ctx, "missing", state.DecisionDeny, 1, at, ""), state.ErrNotFound)

	for _, d := range []state.Decision{state.DecisionPending, "maybe", "ALLOW"} {
		require.NoError(t, s.PutApproval(ctx, sampleApproval("v-"+string(d), key, t0)))
		assert.ErrorIs(t, s.DecideApproval(ctx, "v-"+string(d), d, 1, at, ""), state.ErrInvalid, "decision %q", d)
	}
}

func TestDecideApprovalEveryDecision(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	decisions := []state.Decision{
		state.DecisionAllow, state.DecisionDeny, state.DecisionAlways, state.DecisionAnswer,
		state.DecisionExpired, state.DecisionWithdrawn, state.DecisionInterrupted,
	}
	for _, d := range decisions {
		assert.True(t, d.Final(), d)
		tok := "tok-" + string(d)
		require.NoError(t, s.PutApproval(ctx, sampleApproval(tok, state.ChatKey{Chat: 1}, t0)))
		require.NoError(t, s.DecideApproval(ctx, tok, d, 0, time.Time{}, ""), "the schema accepts %q", d)
		got, err := s.GetApproval(ctx, tok)
		require.NoError(t, err)
		assert.Equal(t, d, got.Decision)
		assert.False(t, got.DecidedAt.IsZero(), "zero at means now")
	}
	assert.False(t, state.DecisionPending.Final())
}

// Many users press buttons on one prompt at the same moment: exactly one
// decision is recorded and every other caller is told it lost.
func TestDecideApprovalConcurrentOneWinner(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Two Stores on one file stand in for two processes: their in-process
	// write locks are independent, so only the SQL compare-and-set can keep
	// the decision single.
	stores := []*state.Store{openStore(t, dir), openStore(t, dir)}
	const (
		tokens  = 20
		callers = 16
	)
	for i := range tokens {
		require.NoError(t, stores[0].PutApproval(ctx, sampleApproval(fmt.Sprint("t", i), state.ChatKey{Chat: 1}, t0)))
	}

	type result struct {
		by  state.UserID
		err error
	}
	for i := range tokens {
		token := fmt.Sprint("t", i)
		results := make(chan result, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				by := state.UserID(c + 1)
				d := state.DecisionAllow
				if c%2 == 1 {
					d = state.DecisionDeny
				}
				results <- result{by, stores[c%2].DecideApproval(ctx, token, d, by, t0, fmt.Sprint("by ", by))}
			}()
		}
		close(start)
		wg.Wait()
		close(results)

		var winners []state.UserID
		for r := range results {
			if r.err == nil {
				winners = append(winners, r.by)
				continue
			}
			assert.ErrorIs(t, r.err, state.ErrAlreadyDecided)
			assert.False(t, errors.Is(r.err, state.ErrNotFound))
		}
		require.Len(t, winners, 1, "token %s", token)
		got, err := stores[0].GetApproval(ctx, token)
		require.NoError(t, err)
		assert.Equal(t, winners[0], got.DecidedBy, "the stored decision is the winner's")
		assert.Equal(t, fmt.Sprint("by ", winners[0]), got.Note)
	}
}

func TestPendingApprovalsAndLog(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	k1 := state.ChatKey{Chat: 1}
	k1t := state.ChatKey{Chat: 1, Thread: 5}
	k2 := state.ChatKey{Chat: 2}
	put := []struct {
		token string
		key   state.ChatKey
		at    time.Duration
	}{
		{"a", k1, 3 * time.Second},
		{"b", k2, 1 * time.Second},
		{"c", k1, 1 * time.Second},
		{"d", k1t, 2 * time.Second},
		{"e", k1, 5 * time.Second},
	}
	for _, p := range put {
		require.NoError(t, s.PutApproval(ctx, sampleApproval(p.token, p.key, t0.Add(p.at))))
	}
	require.NoError(t, s.DecideApproval(ctx, "a", state.DecisionDeny, 1, t0.Add(time.Minute), ""))
	require.NoError(t, s.DecideApproval(ctx, "b", state.DecisionExpired, 0, t0.Add(time.Minute), ""))

	pending, err := s.PendingApprovals(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "d", "e"}, tokensOf(pending), "oldest first, decided ones excluded")
	for _, a := range pending {
		assert.Equal(t, state.DecisionPending, a.Decision)
	}

	tests := []struct {
		key   state.ChatKey
		limit int
		want  []string
	}{
		{k1, 0, []string{"e", "a", "c"}},
		{k1, 2, []string{"e", "a"}},
		{k1t, 0, []string{"d"}},
		{k2, 10, []string{"b"}},
		{state.ChatKey{Chat: 3}, 0, nil},
	}
	for _, tt := range tests {
		log, err := s.ApprovalLog(ctx, tt.key, tt.limit)
		require.NoError(t, err)
		assert.Equal(t, tt.want, tokensOf(log), "key %s limit %d", tt.key, tt.limit)
	}
	log, err := s.ApprovalLog(ctx, k1, 0)
	require.NoError(t, err)
	assert.Equal(t, state.DecisionDeny, log[1].Decision, "the log carries decisions")
}

func tokensOf(as []state.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Token)
	}
	return out
}

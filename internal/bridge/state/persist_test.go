package state_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

// Everything written before Close is there after a fresh Open: the
// "restart" the store exists for.
func TestReopenPersistsEverything(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := state.ChatKey{Chat: -100123, Thread: 7}

	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	chat := state.Chat{Key: key, SessionID: "sess", Model: "opus", PermissionMode: "acceptEdits", Workdir: "/w", LastActive: t0}
	live := state.LiveMessage{Key: key, MessageID: 55, Kind: state.LiveProgress, Ref: "turn-9", CreatedAt: t0}
	pending := sampleApproval("pend", key, t0)
	decided := sampleApproval("done", key, t0.Add(-time.Minute))
	turn := state.TurnRecord{Key: key, SessionID: "sess", StartedAt: t0, Duration: time.Second, CostUSD: 0.5, ContextPct: 33, OK: true, TerminalReason: "completed"}
	item := state.OutboxItem{Key: key, Kind: "send", Payload: []byte(`{"text":"final answer"}`), CreatedAt: t0}

	require.NoError(t, s.SetLastUpdateID(ctx, 987654))
	require.NoError(t, s.PutChat(ctx, chat))
	require.NoError(t, s.AddLive(ctx, live))
	require.NoError(t, s.PutApproval(ctx, pending))
	require.NoError(t, s.PutApproval(ctx, decided))
	require.NoError(t, s.SetApprovalMessage(ctx, "pend", 56))
	require.NoError(t, s.DecideApproval(ctx, "done", state.DecisionAlways, 42, t0, "ok"))
	require.NoError(t, s.RecordTurn(ctx, turn))
	item.ID, err = s.EnqueueOutbox(ctx, item)
	require.NoError(t, err)
	require.NoError(t, s.BumpOutboxAttempt(ctx, item.ID))
	require.NoError(t, s.Close())

	s = openStore(t, dir)
	off, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(987654), off)

	gotChat, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	chat.CostUSD, chat.Turns, chat.LastActive = 0.5, 1, t0.Add(time.Second)
	assert.Equal(t, chat, gotChat)

	gotLive, err := s.ListLive(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.LiveMessage{live}, gotLive)

	gotPending, err := s.PendingApprovals(ctx)
	require.NoError(t, err)
	pending.MessageID = 56
	assert.Equal(t, []state.Approval{pending}, gotPending)

	gotDecided, err := s.GetApproval(ctx, "done")
	require.NoError(t, err)
	assert.Equal(t, state.DecisionAlways, gotDecided.Decision)
	assert.Equal(t, state.UserID(42), gotDecided.DecidedBy)
	assert.ErrorIs(t, s.DecideApproval(ctx, "done", state.DecisionDeny, 1, t0, ""), state.ErrAlreadyDecided,
		"a decision survives a restart")

	gotTurns, err := s.RecentTurns(ctx, key, 0)
	require.NoError(t, err)
	assert.Equal(t, []state.TurnRecord{turn}, gotTurns)

	gotOutbox, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	item.Attempts = 1
	assert.Equal(t, []state.OutboxItem{item}, gotOutbox)
}

// One goroutine per chat writes while others read, as the bridge's actors
// do. Run under -race; the totals prove no write was lost.
func TestConcurrentChatsReadWhileWriting(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	const (
		chats = 12
		turns = 15
	)
	var wg sync.WaitGroup
	for c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := state.ChatKey{Chat: state.ChatID(c + 1), Thread: state.ThreadID(c % 3)}
			assert.NoError(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: fmt.Sprint("s", c)}))
			for i := range turns {
				assert.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: t0.Add(time.Duration(i) * time.Second), CostUSD: 0.25}))
				assert.NoError(t, s.SetLastUpdateID(ctx, int64(c*turns+i)))
				id, err := s.EnqueueOutbox(ctx, state.OutboxItem{Key: key, Kind: "send", Payload: []byte("p")})
				assert.NoError(t, err)
				if i%2 == 0 {
					assert.NoError(t, s.AckOutbox(ctx, id))
				}
				_, err = s.GetChat(ctx, key)
				assert.NoError(t, err)
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range turns {
				_, err := s.ListChats(ctx)
				assert.NoError(t, err)
				_, err = s.PendingOutbox(ctx)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()

	all, err := s.ListChats(ctx)
	require.NoError(t, err)
	require.Len(t, all, chats)
	for _, c := range all {
		assert.Equal(t, turns, c.Turns, c.Key.String())
		assert.InDelta(t, 0.25*turns, c.CostUSD, 1e-9, c.Key.String())
	}
	off, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(chats*turns-1), off, "the highest id wins whatever the order")
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	assert.Len(t, pending, chats*(turns/2))
}

package state_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestMigrateChatMovesEverything(t *testing.T) {
	ctx := context.Background()
	s, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	const from, to = state.ChatID(-42), state.ChatID(-100042)
	general, topic := state.ChatKey{Chat: from}, state.ChatKey{Chat: from, Thread: 7}
	other := state.ChatKey{Chat: -5}
	for _, k := range []state.ChatKey{general, topic, other} {
		require.NoError(t, s.PutChat(ctx, state.Chat{Key: k, SessionID: "sess-" + k.String(), PermissionMode: "plan"}))
		require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: k, SessionID: "sess-" + k.String(), StartedAt: time.Now(), CostUSD: 0.5, OK: true}))
	}
	require.NoError(t, s.PutApproval(ctx, state.Approval{Token: "tok", Key: topic, RequestID: "r1", Tool: "Bash"}))
	require.NoError(t, s.AddLive(ctx, state.LiveMessage{Key: general, MessageID: 9, Kind: state.LiveProgress, CreatedAt: time.Now()}))
	require.NoError(t, s.PutPanel(ctx, state.Panel{Key: topic, MessageID: 11, Token: "panel-tok"}))
	require.NoError(t, s.PutPanel(ctx, state.Panel{Key: other, MessageID: 12, Token: "other-tok"}))
	_, err = s.EnqueueOutbox(ctx, state.OutboxItem{Key: general, Kind: "send", Payload: []byte(`{}`), CreatedAt: time.Now()})
	require.NoError(t, err)
	// The supergroup was seen first (a placeholder row with nothing in it).
	require.NoError(t, s.PutChat(ctx, state.Chat{Key: state.ChatKey{Chat: to}}))

	require.NoError(t, s.MigrateChat(ctx, from, to))

	for _, k := range []state.ChatKey{general, topic} {
		_, err := s.GetChat(ctx, k)
		assert.True(t, errors.Is(err, state.ErrNotFound), "old %s gone: %v", k, err)
		moved, err := s.GetChat(ctx, state.ChatKey{Chat: to, Thread: k.Thread})
		require.NoError(t, err)
		assert.Equal(t, "sess-"+k.String(), moved.SessionID, "the session follows the chat")
		assert.Equal(t, "plan", moved.PermissionMode, "so do its settings")
		turns, err := s.RecentTurns(ctx, moved.Key, 5)
		require.NoError(t, err)
		assert.Len(t, turns, 1, "and its turns")
	}
	a, err := s.GetApproval(ctx, "tok")
	require.NoError(t, err)
	assert.Equal(t, state.ChatKey{Chat: to, Thread: 7}, a.Key)
	live, err := s.ListLive(ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "old message ids cannot be edited in the new chat")
	panels, err := s.ListPanels(ctx)
	require.NoError(t, err)
	require.Len(t, panels, 1, "a panel is a message of the old chat, like a live one")
	assert.Equal(t, other, panels[0].Key)
	items, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, to, items[0].Key.Chat, "undelivered answers go to the new chat")
	untouched, err := s.GetChat(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, "sess-"+other.String(), untouched.SessionID)

	require.NoError(t, s.MigrateChat(ctx, from, to), "migrating again changes nothing")
	again, err := s.GetChat(ctx, state.ChatKey{Chat: to})
	require.NoError(t, err)
	assert.Equal(t, "sess-"+general.String(), again.SessionID)
}

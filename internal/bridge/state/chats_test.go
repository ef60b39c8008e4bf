package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestGetChatNotFound(t *testing.T) {
	s := newStore(t)
	_, err := s.GetChat(context.Background(), state.ChatKey{Chat: 1, Thread: 2})
	assert.ErrorIs(t, err, state.ErrNotFound)
	assert.Contains(t, err.Error(), "get chat 1/2")
}

func TestPutGetChat(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: -100200, Thread: 7}
	c := state.Chat{
		Key: key, SessionID: "sess-1", Model: "opus", PermissionMode: "default",
		Workdir: "/home/dev/p", Project: "api", Branch: "feature", LastActive: t0, CostUSD: 0.5, Turns: 2, Effort: "high",
	}
	require.NoError(t, s.PutChat(ctx, c))
	got, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	// The same chat without a topic is a different conversation.
	_, err = s.GetChat(ctx, state.ChatKey{Chat: -100200})
	assert.ErrorIs(t, err, state.ErrNotFound)

	// An update changes identity and settings but not the totals, which
	// belong to RecordTurn: this copy is stale (cost 0, 0 turns).
	require.NoError(t, s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: t0, CostUSD: 0.25}))
	upd := state.Chat{Key: key, SessionID: "sess-2", Model: "sonnet", PermissionMode: "plan",
		Workdir: "/w", LastActive: t0.Add(time.Hour), Effort: "max"}
	require.NoError(t, s.PutChat(ctx, upd))
	got, err = s.GetChat(ctx, key)
	require.NoError(t, err)
	want := upd
	want.CostUSD, want.Turns = 0.75, 3
	assert.Equal(t, want, got)
}

func TestListAndRecentChats(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	chats := []state.Chat{
		{Key: state.ChatKey{Chat: 3}, LastActive: t0.Add(-3 * time.Hour)},
		{Key: state.ChatKey{Chat: 1, Thread: 9}, LastActive: t0.Add(-time.Minute)},
		{Key: state.ChatKey{Chat: 1}, LastActive: t0.Add(-2 * time.Hour)},
		{Key: state.ChatKey{Chat: 2}, LastActive: t0},
		{Key: state.ChatKey{Chat: 4}}, // never active
	}
	for _, c := range chats {
		require.NoError(t, s.PutChat(ctx, c))
	}

	all, err := s.ListChats(ctx)
	require.NoError(t, err)
	assert.Equal(t, []state.ChatKey{{Chat: 1}, {Chat: 1, Thread: 9}, {Chat: 2}, {Chat: 3}, {Chat: 4}}, keysOf(all))

	tests := []struct {
		name  string
		since time.Time
		limit int
		want  []state.ChatKey
	}{
		{"last 2.5h", t0.Add(-150 * time.Minute), 0, []state.ChatKey{{Chat: 2}, {Chat: 1, Thread: 9}, {Chat: 1}}},
		{"limit", t0.Add(-150 * time.Minute), 2, []state.ChatKey{{Chat: 2}, {Chat: 1, Thread: 9}}},
		{"since is inclusive", t0, 0, []state.ChatKey{{Chat: 2}}},
		{"nothing recent", t0.Add(time.Second), 10, nil},
		{"zero since: all, never-active last", time.Time{}, 0,
			[]state.ChatKey{{Chat: 2}, {Chat: 1, Thread: 9}, {Chat: 1}, {Chat: 3}, {Chat: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.RecentChats(ctx, tt.since, tt.limit)
			require.NoError(t, err)
			assert.Equal(t, tt.want, keysOf(got))
		})
	}
}

func TestListChatsEmpty(t *testing.T) {
	got, err := newStore(t).ListChats(context.Background())
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestForgetSession(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	key := state.ChatKey{Chat: 5, Thread: 1}
	c := state.Chat{Key: key, SessionID: "abc", Model: "opus", Workdir: "/w", LastActive: t0, CostUSD: 1, Turns: 4}
	require.NoError(t, s.PutChat(ctx, c))
	other := state.Chat{Key: state.ChatKey{Chat: 5}, SessionID: "keep"}
	require.NoError(t, s.PutChat(ctx, other))

	require.NoError(t, s.ForgetSession(ctx, key))
	got, err := s.GetChat(ctx, key)
	require.NoError(t, err)
	want := c
	want.SessionID = ""
	assert.Equal(t, want, got, "only the session id is forgotten")

	got, err = s.GetChat(ctx, other.Key)
	require.NoError(t, err)
	assert.Equal(t, "keep", got.SessionID, "the sibling conversation is untouched")

	assert.NoError(t, s.ForgetSession(ctx, state.ChatKey{Chat: 404}), "nothing to forget is fine")
	_, err = s.GetChat(ctx, state.ChatKey{Chat: 404})
	assert.ErrorIs(t, err, state.ErrNotFound, "forgetting does not create a row")
}

func keysOf(chats []state.Chat) []state.ChatKey {
	var keys []state.ChatKey
	for _, c := range chats {
		keys = append(keys, c.Key)
	}
	return keys
}

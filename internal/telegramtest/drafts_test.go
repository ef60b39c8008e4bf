package telegramtest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

func sendDraft(b *bot.Bot, chat telegramtest.ChatID, thread telegramtest.ThreadID, id int, text string) error {
	_, err := b.SendMessageDraft(context.Background(), &bot.SendMessageDraftParams{
		ChatID: int64(chat), MessageThreadID: int(thread), DraftID: strconv.Itoa(id), Text: text, ParseMode: models.ParseModeHTML,
	})
	return err
}

// The contract of sendMessageDraft: private chats only, validated like a
// message, and what the user sees is one ephemeral draft per chat, the
// latest.
func TestDraftContract(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	b := newBot(t, srv)

	refused := []struct {
		name   string
		chat   telegramtest.ChatID
		thread telegramtest.ThreadID
		id     int
		text   string
		desc   string
	}{
		{"a group", group, 0, 5, "x", "Bad Request: TEXTDRAFT_PEER_INVALID"},
		{"a forum topic", forum, topic, 5, "x", "Bad Request: TEXTDRAFT_PEER_INVALID"},
		{"empty text", dm, 0, 5, "", "Bad Request: text must be non-empty"},
		{"text that parses to nothing", dm, 0, 5, "<b></b>", "Bad Request: text must be non-empty"},
		{"draft id 0", dm, 0, 0, "x", "draft_id must be a non-zero integer"},
		{"bad HTML", dm, 0, 5, "<x>", "can't parse entities"},
	}
	for _, tt := range refused {
		err := sendDraft(b, tt.chat, tt.thread, tt.id, tt.text)
		require.ErrorIs(t, err, bot.ErrorBadRequest, tt.name)
		assert.Contains(t, err.Error(), tt.desc, tt.name)
	}
	assert.Empty(t, srv.Drafts(), "a refused call shows nothing")

	// Latest wins, whether the id animates the same draft or replaces it.
	require.NoError(t, sendDraft(b, dm, 0, 5, "Hel"))
	require.NoError(t, sendDraft(b, dm, 0, 5, "Hello <b>there</b>"))
	shown, ok := srv.ShownDraft(dm, 0)
	require.True(t, ok)
	assert.Equal(t, "Hello there", shown.Text)
	assert.Equal(t, int64(5), shown.DraftID)
	require.NoError(t, sendDraft(b, dm, 0, 6, "Second reply"))
	shown, _ = srv.ShownDraft(dm, 0)
	assert.Equal(t, telegramtest.Draft{Chat: dm, DraftID: 6, Text: "Second reply", Time: clock.Now()}, shown)
	assert.Len(t, srv.Drafts(), 3, "every accepted call is kept for tests")

	// Ephemeral: a bot message replaces it ...
	_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "Second reply, complete"})
	require.NoError(t, err)
	_, ok = srv.ShownDraft(dm, 0)
	assert.False(t, ok, "the message replaced the draft")
	// ... so does a chat action ...
	require.NoError(t, sendDraft(b, dm, 0, 7, "Third"))
	_, err = b.SendChatAction(context.Background(), &bot.SendChatActionParams{ChatID: int64(dm), Action: models.ChatActionTyping})
	require.NoError(t, err)
	_, ok = srv.ShownDraft(dm, 0)
	assert.False(t, ok, "typing replaced the draft")
	// ... and it fades without updates.
	require.NoError(t, sendDraft(b, dm, 0, 8, "Fourth"))
	clock.Advance(telegramtest.DraftLifetime - time.Second)
	_, ok = srv.ShownDraft(dm, 0)
	assert.True(t, ok)
	clock.Advance(time.Second)
	_, ok = srv.ShownDraft(dm, 0)
	assert.False(t, ok, "gone after DraftLifetime")
	assert.Empty(t, srv.Snapshot().ShownDrafts)
}

// Drafts spend none of the flood windows of sends and edits; a chat under
// a penalty refuses them like everything else.
func TestDraftFloodContract(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	srv.EnableFloodControl(telegramtest.DefaultFloodLimits())
	b := newBot(t, srv)
	for i := range 20 {
		require.NoError(t, sendDraft(b, dm, 0, 1, "word "+strconv.Itoa(i)))
	}
	for range 3 {
		_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "burst"})
		require.NoError(t, err, "the drafts left the window untouched")
	}
	_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "one too many"})
	var tmr *bot.TooManyRequestsError
	require.True(t, errors.As(err, &tmr), "%v", err)
	err = sendDraft(b, dm, 0, 1, "during the penalty")
	require.True(t, errors.As(err, &tmr), "%v", err)
}

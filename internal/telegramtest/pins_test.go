package telegramtest_test

import (
	"context"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// TestPinChatMessage: a bot pins and unpins in a private chat, and in a
// group only with the right to; what is pinned shows on the message.
func TestPinChatMessage(t *testing.T) {
	const admin telegramtest.ChatID = -100500
	srv := newFake(t)
	srv.AddChat(telegramtest.Chat{ID: admin, Type: telegramtest.Supergroup, Title: "Pins", BotCanPin: true})
	b := newBot(t, srv)
	ctx := context.Background()
	for _, chat := range []telegramtest.ChatID{dm, admin} {
		msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(chat), Text: "panel"})
		require.NoError(t, err)
		ok, err := b.PinChatMessage(ctx, &bot.PinChatMessageParams{ChatID: int64(chat), MessageID: msg.ID, DisableNotification: true})
		require.NoError(t, err, "decoded by the real client")
		assert.True(t, ok)
		m, _ := srv.Message(chat, telegramtest.MessageID(msg.ID))
		assert.True(t, m.Pinned)
		_, err = b.UnpinChatMessage(ctx, &bot.UnpinChatMessageParams{ChatID: int64(chat), MessageID: msg.ID})
		require.NoError(t, err)
		m, _ = srv.Message(chat, telegramtest.MessageID(msg.ID))
		assert.False(t, m.Pinned)
	}

	msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(group), Text: "panel"})
	require.NoError(t, err)
	_, err = b.PinChatMessage(ctx, &bot.PinChatMessageParams{ChatID: int64(group), MessageID: msg.ID})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Bad Request: not enough rights to manage pinned messages in the chat")
	m, _ := srv.Message(group, telegramtest.MessageID(msg.ID))
	assert.False(t, m.Pinned)
	_, err = b.PinChatMessage(ctx, &bot.PinChatMessageParams{ChatID: int64(dm), MessageID: 9999})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "message to pin not found")
}

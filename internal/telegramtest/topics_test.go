package telegramtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

func TestCreateForumTopic(t *testing.T) {
	const managed telegramtest.ChatID = -100400
	srv := newFake(t)
	srv.AddChat(telegramtest.Chat{ID: managed, Type: telegramtest.Supergroup, Title: "Work", IsForum: true, BotCanManageTopics: true})
	b := newBot(t, srv)
	ctx := context.Background()

	before := srv.UserSends(managed, jane, "hello")
	topic, err := b.CreateForumTopic(ctx, &bot.CreateForumTopicParams{ChatID: int64(managed), Name: "api · feature"})
	require.NoError(t, err, "decoded by the real client")
	assert.Equal(t, "api · feature", topic.Name)
	assert.Greater(t, topic.MessageThreadID, int(before.ID), "a topic's id is its creation message's, after the messages before it")
	assert.Equal(t, telegramtest.TopicIconColors[0], topic.IconColor)
	assert.Equal(t, []telegramtest.ForumTopic{{Chat: managed, ThreadID: telegramtest.ThreadID(topic.MessageThreadID), Name: "api · feature", IconColor: topic.IconColor}},
		srv.Topics())

	// The new topic takes messages both ways.
	msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(managed), MessageThreadID: topic.MessageThreadID, Text: "in the new topic"})
	require.NoError(t, err)
	assert.True(t, msg.IsTopicMessage)
	in := srv.UserSends(managed, jane, "from a user", telegramtest.InTopic(telegramtest.ThreadID(topic.MessageThreadID)))
	assert.Equal(t, telegramtest.ThreadID(topic.MessageThreadID), in.Thread)

	colored, err := b.CreateForumTopic(ctx, &bot.CreateForumTopicParams{ChatID: int64(managed), Name: "web", IconColor: 0xFB6F5F})
	require.NoError(t, err)
	assert.Equal(t, 0xFB6F5F, colored.IconColor)

	for _, tc := range []struct {
		name   string
		params *bot.CreateForumTopicParams
		want   string
	}{
		{"not a forum", &bot.CreateForumTopicParams{ChatID: int64(group), Name: "x"}, "Bad Request: the chat is not a forum"},
		{"private chat", &bot.CreateForumTopicParams{ChatID: int64(dm), Name: "x"}, "Bad Request: the chat is not a forum"},
		{"no rights", &bot.CreateForumTopicParams{ChatID: int64(forum), Name: "x"}, "Bad Request: not enough rights to create a topic"},
		{"unknown chat", &bot.CreateForumTopicParams{ChatID: -1, Name: "x"}, "Bad Request: chat not found"},
		{"blank name", &bot.CreateForumTopicParams{ChatID: int64(managed), Name: "  "}, "Bad Request: TOPIC_TITLE_EMPTY"},
		{"long name", &bot.CreateForumTopicParams{ChatID: int64(managed), Name: strings.Repeat("é", 129)}, "Bad Request: TOPIC_TITLE_TOO_LONG"},
		{"bad color", &bot.CreateForumTopicParams{ChatID: int64(managed), Name: "x", IconColor: 0x123456}, "Bad Request: TOPIC_ICON_COLOR_INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.CreateForumTopic(ctx, tc.params)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Len(t, srv.Topics(), 2, "a refused call makes no topic")
}

package telegramtest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// These tests drive the fake with the real go-telegram/bot client, so the
// fake's wire shapes are checked against an independent decoder.

func keyboardOf(rows ...[]string) *models.InlineKeyboardMarkup {
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	for _, row := range rows {
		var r []models.InlineKeyboardButton
		for _, data := range row {
			r = append(r, models.InlineKeyboardButton{Text: "btn " + data, CallbackData: data})
		}
		kb.InlineKeyboard = append(kb.InlineKeyboard, r)
	}
	return kb
}

func TestGetMeThroughBotNew(t *testing.T) {
	srv := newFake(t)
	// Without WithSkipGetMe, bot.New calls getMe with an empty multipart body.
	b, err := bot.New(srv.Token(), bot.WithServerURL(srv.URL()))
	require.NoError(t, err)
	me, err := b.GetMe(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(123456), me.ID)
	assert.True(t, me.IsBot)
	assert.True(t, me.CanJoinGroups)
	assert.Equal(t, "untether_test_bot", me.Username)
	assert.Equal(t, int64(srv.BotID()), b.ID())
}

func TestSendMessageParsesHTMLWithUTF16Offsets(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	msg, err := b.SendMessage(context.Background(), &bot.SendMessageParams{
		ChatID: int64(dm), Text: "<b>héllo</b> 😀 <i>x &amp; y</i>", ParseMode: models.ParseModeHTML,
		ReplyMarkup: keyboardOf([]string{"a:1", "d:1"}),
	})
	require.NoError(t, err)
	assert.Equal(t, "héllo 😀 x & y", msg.Text)
	assert.Equal(t, []models.MessageEntity{
		{Type: models.MessageEntityTypeBold, Offset: 0, Length: 5},
		{Type: models.MessageEntityTypeItalic, Offset: 9, Length: 5}, // 😀 is two UTF-16 units
	}, msg.Entities)
	assert.Equal(t, 1, msg.ID)
	require.NotNil(t, msg.From)
	assert.True(t, msg.From.IsBot)
	assert.Equal(t, int64(dm), msg.Chat.ID)
	assert.Equal(t, models.ChatTypePrivate, msg.Chat.Type)
	assert.NotZero(t, msg.Date)
	require.NotNil(t, msg.ReplyMarkup)
	assert.Equal(t, "d:1", msg.ReplyMarkup.InlineKeyboard[0][1].CallbackData)

	stored, ok := srv.Message(dm, 1)
	require.True(t, ok)
	assert.Equal(t, "<b>héllo</b> 😀 <i>x &amp; y</i>", stored.Raw)
	assert.Equal(t, "HTML", stored.ParseMode)
	assert.True(t, stored.HasButton("a:1"))
}

func TestMessageIDsAreSharedPerChat(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	user := srv.UserSends(dm, jane, "hi")
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "hello"})
	require.NoError(t, err)
	other, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(group), Text: "hello group"})
	require.NoError(t, err)
	assert.Equal(t, telegramtest.MessageID(1), user.ID)
	assert.Equal(t, 2, sent.ID, "user and bot messages share the chat's counter")
	assert.Equal(t, 1, other.ID, "every chat counts from its own start")

	reply, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "re", ReplyParameters: &models.ReplyParameters{MessageID: int(user.ID)}})
	require.NoError(t, err)
	require.NotNil(t, reply.ReplyToMessage)
	assert.Equal(t, "hi", reply.ReplyToMessage.Text)
	stored, _ := srv.Message(dm, telegramtest.MessageID(reply.ID))
	assert.Equal(t, user.ID, stored.ReplyTo)
}

func TestEditSemantics(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "working", ReplyMarkup: keyboardOf([]string{"stop"})})
	require.NoError(t, err)

	edited, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: sent.ID, Text: "still working", ReplyMarkup: keyboardOf([]string{"stop"})})
	require.NoError(t, err)
	assert.Equal(t, "still working", edited.Text)
	assert.NotZero(t, edited.EditDate)
	require.NotNil(t, edited.ReplyMarkup, "resending the keyboard keeps it")

	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: sent.ID, Text: "still working\n", ReplyMarkup: keyboardOf([]string{"stop"})})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message is not modified: specified new message content and reply markup are exactly the same")

	edited, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: sent.ID, Text: "still working"})
	require.NoError(t, err, "dropping the keyboard is a modification")
	assert.Nil(t, edited.ReplyMarkup, "editMessageText without reply_markup removes the keyboard")
	m, _ := srv.Message(dm, telegramtest.MessageID(sent.ID))
	assert.Nil(t, m.Keyboard)
	assert.Equal(t, 2, m.EditCount)

	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: sent.ID, Text: ""})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "text must be non-empty")

	userMsg := srv.UserSends(dm, jane, "mine")
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: int(userMsg.ID), Text: "x"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message can't be edited")
}

func TestEditMessageReplyMarkup(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "approve?", ReplyMarkup: keyboardOf([]string{"a", "d"})})
	require.NoError(t, err)

	_, err = b.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: int64(dm), MessageID: sent.ID, ReplyMarkup: keyboardOf([]string{"a", "d"})})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message is not modified")

	// An empty inline keyboard removes the buttons; text stays.
	edited, err := b.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: int64(dm), MessageID: sent.ID, ReplyMarkup: keyboardOf()})
	require.NoError(t, err)
	assert.Nil(t, edited.ReplyMarkup)
	assert.Equal(t, "approve?", edited.Text)

	// Absent reply_markup on a message without keyboard is "not modified".
	_, err = b.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: int64(dm), MessageID: sent.ID})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message is not modified")
}

func TestDeleteMessage(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	b := newBot(t, srv)
	ctx := context.Background()
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "bye", ReplyMarkup: keyboardOf([]string{"x"})})
	require.NoError(t, err)
	ok, err := b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: int64(dm), MessageID: sent.ID})
	require.NoError(t, err)
	assert.True(t, ok)

	_, err = b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: int64(dm), MessageID: sent.ID})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message to delete not found")
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(dm), MessageID: sent.ID, Text: "again"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message to edit not found")
	_, err = srv.TryUserPresses(dm, telegramtest.User{}, telegramtest.MessageID(sent.ID), "x")
	assert.ErrorContains(t, err, "deleted")

	old, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "old"})
	require.NoError(t, err)
	clock.Advance(48 * time.Hour)
	_, err = b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: int64(dm), MessageID: old.ID})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message can't be deleted")
}

func TestLengthLimitsCountUTF16AfterParsing(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	cases := []struct {
		name, text, mode string
		ok               bool
	}{
		{"4096 ASCII", strings.Repeat("a", 4096), "", true},
		{"4097 ASCII", strings.Repeat("a", 4097), "", false},
		{"tags do not count", "<b>" + strings.Repeat("a", 4096) + "</b>", "HTML", true},
		{"entities count once decoded", strings.Repeat("&amp;", 4096), "HTML", true},
		{"2048 emoji are 4096 units", strings.Repeat("😀", 2048), "", true},
		{"2049 emoji are 4098 units", strings.Repeat("😀", 2049), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: tc.text, ParseMode: models.ParseMode(tc.mode)})
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, bot.ErrorBadRequest)
			assert.Contains(t, err.Error(), "message is too long")
		})
	}
}

func TestBadRequestsSurfaceTelegramWording(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	long := strings.Repeat("x", 65)
	cases := []struct {
		name   string
		params *bot.SendMessageParams
		want   string
	}{
		{"unknown tag", &bot.SendMessageParams{ChatID: int64(dm), Text: "a <how> b", ParseMode: models.ParseModeHTML},
			`Bad Request: can't parse entities: Unsupported start tag "how" at byte offset 2`},
		{"unclosed tag", &bot.SendMessageParams{ChatID: int64(dm), Text: "<b>bold", ParseMode: models.ParseModeHTML},
			`Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`},
		{"bare ampersand (strict)", &bot.SendMessageParams{ChatID: int64(dm), Text: "a & b", ParseMode: models.ParseModeHTML},
			`Bad Request: can't parse entities:`},
		{"callback_data over 64 bytes", &bot.SendMessageParams{ChatID: int64(dm), Text: "x", ReplyMarkup: keyboardOf([]string{long})},
			"Bad Request: BUTTON_DATA_INVALID"},
		{"empty text", &bot.SendMessageParams{ChatID: int64(dm), Text: "  \n"}, "Bad Request: message text is empty"},
		{"unknown chat", &bot.SendMessageParams{ChatID: 999, Text: "x"}, "Bad Request: chat not found"},
		{"topic in a plain group", &bot.SendMessageParams{ChatID: int64(group), MessageThreadID: 7, Text: "x"}, "Bad Request: message thread not found"},
		{"General topic id", &bot.SendMessageParams{ChatID: int64(forum), MessageThreadID: 1, Text: "x"}, "Bad Request: message thread not found"},
		{"MarkdownV2 reserved", &bot.SendMessageParams{ChatID: int64(dm), Text: "v1.2", ParseMode: models.ParseModeMarkdown},
			`Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\'`},
		{"reply to nothing", &bot.SendMessageParams{ChatID: int64(dm), Text: "x", ReplyParameters: &models.ReplyParameters{MessageID: 99}},
			"Bad Request: message to be replied not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.SendMessage(context.Background(), tc.params)
			require.ErrorIs(t, err, bot.ErrorBadRequest)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "x", ReplyMarkup: keyboardOf([]string{strings.Repeat("é", 32)})})
	require.NoError(t, err, "64 bytes of callback_data is the maximum, counted in bytes")
	assert.Len(t, srv.Snapshot().BotMessages(dm), 1, "rejected sends store nothing")
}

func TestForumTopics(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	msg, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(forum), MessageThreadID: int(topic), Text: "in topic"})
	require.NoError(t, err)
	assert.Equal(t, int(topic), msg.MessageThreadID)
	assert.True(t, msg.IsTopicMessage)
	assert.True(t, msg.Chat.IsForum)
	assert.Greater(t, msg.ID, int(topic), "a topic id is the id of its creation message")

	newTopic := srv.AddTopic(forum)
	_, err = b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(forum), MessageThreadID: int(newTopic), Text: "new topic"})
	require.NoError(t, err)

	// A reply in General carries a thread id but is not a topic message.
	general := srv.UserSends(forum, jane, "question")
	reply := srv.UserSends(forum, jane, "follow-up", telegramtest.ReplyingTo(general.ID))
	assert.Equal(t, telegramtest.ThreadID(general.ID), reply.Thread)
	assert.False(t, reply.IsTopic)
	inTopic := srv.UserSends(forum, jane, "topic msg", telegramtest.InTopic(topic))
	assert.True(t, inTopic.IsTopic)
}

func TestSendDocument(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	msg, err := b.SendDocument(ctx, &bot.SendDocumentParams{
		ChatID: int64(forum), MessageThreadID: int(topic), Caption: "<b>out</b>put", ParseMode: models.ParseModeHTML,
		Document: &models.InputFileUpload{Filename: "out.txt", Data: bytes.NewReader([]byte("hello file"))},
	})
	require.NoError(t, err)
	require.NotNil(t, msg.Document)
	assert.Equal(t, "out.txt", msg.Document.FileName)
	assert.Equal(t, "text/plain", msg.Document.MimeType)
	assert.Equal(t, int64(10), msg.Document.FileSize)
	assert.NotEmpty(t, msg.Document.FileID)
	assert.Equal(t, "output", msg.Caption)
	assert.Equal(t, []models.MessageEntity{{Type: models.MessageEntityTypeBold, Length: 3}}, msg.CaptionEntities)

	docs := srv.Documents()
	require.Len(t, docs, 1)
	assert.Equal(t, []byte("hello file"), docs[0].Document.Data)
	assert.Equal(t, topic, docs[0].Thread)

	again, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm), Document: &models.InputFileString{Data: msg.Document.FileID}})
	require.NoError(t, err, "a known file_id can be resent")
	assert.Equal(t, msg.Document.FileID, again.Document.FileID)

	_, err = b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm), Caption: strings.Repeat("c", 1025),
		Document: &models.InputFileUpload{Filename: "a.bin", Data: bytes.NewReader([]byte{1})}})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "message caption is too long")
}

func TestChatActionsCommandsAndDrafts(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()

	_, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: int64(forum), MessageThreadID: int(topic), Action: models.ChatActionTyping})
	require.NoError(t, err)
	_, err = b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: int64(dm), Action: "dancing"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "wrong parameter action in request")
	actions := srv.ChatActions()
	require.Len(t, actions, 1)
	assert.Equal(t, telegramtest.ChatAction{Chat: forum, Thread: topic, Action: "typing", Time: actions[0].Time}, actions[0])

	_, err = b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "new", Description: "new session"}, {Command: "stop", Description: "stop"}}})
	require.NoError(t, err)
	got, err := b.GetMyCommands(ctx, &bot.GetMyCommandsParams{})
	require.NoError(t, err)
	assert.Equal(t, []models.BotCommand{{Command: "new", Description: "new session"}, {Command: "stop", Description: "stop"}}, got)
	assert.Equal(t, []telegramtest.BotCommand{{Command: "new", Description: "new session"}, {Command: "stop", Description: "stop"}}, srv.Commands())
	_, err = b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "New", Description: "x"}}})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "BOT_COMMAND_INVALID")

	_, err = b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: int64(dm), DraftID: "5", Text: "<i>thinking</i>", ParseMode: models.ParseModeHTML})
	require.NoError(t, err)
	_, err = b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: int64(group), DraftID: "5", Text: "x"})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	drafts := srv.Drafts()
	require.Len(t, drafts, 1)
	assert.Equal(t, "thinking", drafts[0].Text)
	assert.Equal(t, int64(5), drafts[0].DraftID)
}

// collector is a go-telegram handler that hands updates to the test.
type collector chan *models.Update

// handle never blocks past the bot's shutdown, so a fake that floods the
// handler fails the test instead of deadlocking it.
func (c collector) handle(ctx context.Context, _ *bot.Bot, u *models.Update) {
	select {
	case c <- u:
	case <-ctx.Done():
	}
}

func (c collector) next(t *testing.T) *models.Update {
	t.Helper()
	select {
	case u := <-c:
		return u
	case <-time.After(waitLimit):
		t.Fatal("no update reached the handler")
		return nil
	}
}

func startBot(t *testing.T, srv *telegramtest.Server, opts ...bot.Option) (collector, context.CancelFunc) {
	t.Helper()
	got := make(collector, 16)
	b := newBot(t, srv, append([]bot.Option{bot.WithDefaultHandler(got.handle), bot.WithNotAsyncHandlers()}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Start(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return got, stop
}

func TestLongPollDeliversMessagesAndCallbacks(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	got, _ := startBot(t, srv)
	b := newBot(t, srv)
	ctx := context.Background()

	// Wait until the bot is parked in a long poll, so delivery is a wake-up.
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool {
		calls := s.CallsOf("getUpdates")
		return len(calls) > 0 && calls[len(calls)-1].Status == 0
	})
	srv.UserSends(dm, jane, "héllo /new@untether_test_bot now")
	u := got.next(t)
	require.NotNil(t, u.Message)
	assert.Equal(t, "héllo /new@untether_test_bot now", u.Message.Text)
	assert.Equal(t, []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: 6, Length: 22}}, u.Message.Entities)
	assert.Equal(t, int64(jane.ID), u.Message.From.ID)
	assert.False(t, u.Message.From.IsBot)

	prompt, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "Allow?", ReplyMarkup: keyboardOf([]string{"ap:1", "dn:1"})})
	require.NoError(t, err)
	qid := srv.UserPresses(dm, telegramtest.MessageID(prompt.ID), "ap:1")
	u = got.next(t)
	require.NotNil(t, u.CallbackQuery)
	cq := u.CallbackQuery
	assert.Equal(t, string(qid), cq.ID)
	assert.Equal(t, "ap:1", cq.Data)
	assert.NotEmpty(t, cq.ChatInstance)
	require.NotNil(t, cq.Message.Message, "a pressed message must decode as accessible (non-zero date)")
	assert.Equal(t, prompt.ID, cq.Message.Message.ID)
	assert.Equal(t, int64(jane.ID), cq.From.ID)

	ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID, Text: "approved"})
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "query is too old and response timeout expired or query ID is invalid")
	assert.Equal(t, []telegramtest.CallbackAnswer{{QueryID: qid, Text: "approved", Time: clock.Now()}}, srv.CallbackAnswers())

	late := srv.UserPresses(dm, telegramtest.MessageID(prompt.ID), "dn:1")
	got.next(t)
	clock.Advance(telegramtest.DefaultCallbackTimeout)
	_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: string(late)})
	require.ErrorIs(t, err, bot.ErrorBadRequest, "answers after the deadline are refused")

	_, err = srv.TryUserPresses(dm, telegramtest.User{}, telegramtest.MessageID(prompt.ID), "other")
	assert.ErrorContains(t, err, "no button")
}

func TestConfirmedUpdatesAreNotRedelivered(t *testing.T) {
	srv := newFake(t)
	got, stop := startBot(t, srv)
	first := srv.UserSends(dm, jane, "one")
	second := srv.UserSends(dm, jane, "two")
	assert.Equal(t, "one", got.next(t).Message.Text)
	assert.Equal(t, "two", got.next(t).Message.Text)
	// go-telegram/bot confirms with the offset of its next poll.
	sn := srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool { return len(s.Pending) == 0 })
	assert.Equal(t, telegramtest.UpdateID(100002), sn.ConfirmedOffset)
	stop()

	// A restarted bot without a persisted offset receives only new updates,
	// because the fake (like Telegram) forgot the confirmed ones.
	got2, _ := startBot(t, srv)
	srv.UserSends(dm, jane, "three")
	u := got2.next(t)
	assert.Equal(t, "three", u.Message.Text)
	assert.Equal(t, int64(100002), u.ID)
	handed := srv.Snapshot().HandedOut
	assert.Equal(t, 1, count(handed, 100000), "update %d (message %d) delivered once", 100000, first.ID)
	assert.Equal(t, 1, count(handed, 100001), "update %d (message %d) delivered once", 100001, second.ID)
}

func count(ids []telegramtest.UpdateID, id telegramtest.UpdateID) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

func TestErrorTyping(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	send := func() error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(dm), Text: "x"})
		return err
	}

	srv.FailNext("sendMessage", 1, 429, "", 7)
	err := send()
	var tmr *bot.TooManyRequestsError
	require.True(t, errors.As(err, &tmr), "429 must decode as *bot.TooManyRequestsError, got %v", err)
	assert.Equal(t, 7, tmr.RetryAfter)
	assert.Contains(t, tmr.Message, "Too Many Requests: retry after 7")
	assert.False(t, errors.Is(err, bot.ErrorTooManyRequests), "the library does not wrap the sentinel")

	srv.FailNextWith("sendMessage", 1, telegramtest.Fault{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat", MigrateTo: -100999})
	var mig *bot.MigrateError
	require.ErrorAs(t, send(), &mig)
	assert.Equal(t, -100999, mig.MigrateToChatID)

	srv.FailNext("sendMessage", 1, 403, "", 0)
	require.ErrorIs(t, send(), bot.ErrorForbidden)
	srv.FailNext("sendMessage", 1, 500, "", 0)
	assert.ErrorContains(t, send(), "error response from telegram for method sendMessage, 500 Internal Server Error")
	require.NoError(t, send())

	bad, err := bot.New("123456:wrong", bot.WithServerURL(srv.URL()), bot.WithSkipGetMe())
	require.NoError(t, err)
	_, err = bad.GetMe(ctx)
	require.ErrorIs(t, err, bot.ErrorUnauthorized)
}

func TestUnknownMethodIs404(t *testing.T) {
	srv := newFake(t)
	resp := postJSON(t, srv, "sendTelepathy", map[string]any{"chat_id": dm})
	assert.Equal(t, 404, resp.Status)
	assert.JSONEq(t, `{"ok":false,"error_code":404,"description":"Not Found"}`, string(resp.Text))
}

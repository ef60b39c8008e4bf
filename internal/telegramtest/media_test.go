package telegramtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// pollUpdates reads the queued updates with a plain getUpdates and decodes
// them with go-telegram/bot's models, an independent reading of the wire.
func pollUpdates(t *testing.T, srv *telegramtest.Server, allowed ...string) []models.Update {
	t.Helper()
	params := map[string]any{"timeout": 0}
	if allowed != nil {
		params["allowed_updates"] = allowed
	}
	raw := postJSON(t, srv, "getUpdates", params)
	require.Equal(t, true, raw.Body["ok"], "%s", raw.Text)
	var env struct {
		Result []models.Update `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw.Text, &env), "%s", raw.Text)
	if n := len(env.Result); n > 0 {
		postJSON(t, srv, "getUpdates", map[string]any{"offset": env.Result[n-1].ID + 1, "timeout": 0})
	}
	return env.Result
}

func grayPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	return buf.Bytes()
}

func upload(name string, data []byte) *models.InputFileUpload {
	return &models.InputFileUpload{Filename: name, Data: bytes.NewReader(data)}
}

func TestSendPhotoUploadAndLimits(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	img := testPNG(t, 320, 200)

	msg, err := b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: int64(dm), Photo: upload("chart.png", img),
		Caption: "<b>chart</b> &amp; more", ParseMode: models.ParseModeHTML})
	require.NoError(t, err)
	require.NotEmpty(t, msg.Photo)
	largest := msg.Photo[len(msg.Photo)-1]
	assert.Equal(t, [2]int{320, 200}, [2]int{largest.Width, largest.Height})
	assert.Equal(t, "chart & more", msg.Caption)
	assert.Equal(t, []models.MessageEntity{{Type: models.MessageEntityTypeBold, Length: 5}}, msg.CaptionEntities)
	photos := srv.Snapshot().Photos()
	require.Len(t, photos, 1)
	assert.Equal(t, img, photos[0].PhotoData)
	call := srv.Snapshot().CallsOf("sendPhoto")[0]
	assert.Equal(t, "chart.png", call.Files["photo"], "sent as a multipart file part")
	f, err := b.GetFile(ctx, &bot.GetFileParams{FileID: largest.FileID})
	require.NoError(t, err)
	_, body := download(t, b.FileDownloadLink(f))
	assert.Equal(t, img, body)

	// Sending the same photo again by file_id needs no upload.
	again, err := b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: int64(dm), Photo: &models.InputFileString{Data: largest.FileID}})
	require.NoError(t, err)
	assert.Equal(t, largest.FileID, again.Photo[len(again.Photo)-1].FileID)

	padded := append(testPNG(t, 40, 40), bytes.Repeat([]byte{0}, telegramtest.MaxPhotoUpload)...) // decodable, but over 10 MB
	tests := []struct {
		name  string
		photo models.InputFile
		cap   string
		want  string
	}{
		{"over 10 MB", upload("big.png", padded), "", "PHOTO_SAVE_FILE_INVALID"},
		{"aspect ratio over 20", upload("strip.png", grayPNG(t, 10, 300)), "", "PHOTO_INVALID_DIMENSIONS"},
		{"width plus height over 10000", upload("wide.png", grayPNG(t, 9000, 1001)), "", "PHOTO_INVALID_DIMENSIONS"},
		{"not an image", upload("notes.png", []byte("plain text")), "", "IMAGE_PROCESS_FAILED"},
		{"caption over 1024", upload("ok.png", img), strings.Repeat("x", 1025), "message caption is too long"},
		{"a document's file_id", &models.InputFileString{Data: "nope"}, "", "wrong file identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: int64(dm), Photo: tt.photo, Caption: tt.cap})
			require.Error(t, err)
			assert.ErrorIs(t, err, bot.ErrorBadRequest)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.Len(t, srv.Snapshot().Photos(), 2, "rejected calls store nothing")
}

func TestSendMediaGroupAlbums(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	photos := [][]byte{testPNG(t, 30, 20), testPNG(t, 40, 20), testJPEG(t, 50, 20)}
	in := srv.UserSends(dm, jane, "send me the charts")

	var media []models.InputMedia
	for i, p := range photos {
		name := []string{"a.png", "b.png", "c.jpg"}[i]
		m := &models.InputMediaPhoto{Media: "attach://" + name, MediaAttachment: bytes.NewReader(p)}
		if i == 0 {
			m.Caption, m.ParseMode = "<i>three</i> charts", models.ParseModeHTML
		}
		media = append(media, m)
	}
	msgs, err := b.SendMediaGroup(ctx, &bot.SendMediaGroupParams{ChatID: int64(dm), Media: media,
		ReplyParameters: &models.ReplyParameters{MessageID: int(in.ID)}})
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	group := msgs[0].MediaGroupID
	require.NotEmpty(t, group)
	for i, m := range msgs {
		assert.Equal(t, group, m.MediaGroupID, "one album")
		require.NotEmpty(t, m.Photo, "item %d", i)
	}
	assert.Equal(t, "three charts", msgs[0].Caption)
	assert.Empty(t, msgs[1].Caption, "captions are per item")
	require.NotNil(t, msgs[0].ReplyToMessage)
	assert.Equal(t, int(in.ID), msgs[0].ReplyToMessage.ID)
	album := srv.Snapshot().Album(dm, group)
	require.Len(t, album, 3)
	for i, m := range album {
		assert.Equal(t, photos[i], m.PhotoData, "item %d has its own bytes", i)
	}

	docs := []models.InputMedia{
		&models.InputMediaDocument{Media: "attach://report.txt", MediaAttachment: strings.NewReader("report")},
		&models.InputMediaDocument{Media: "attach://data.csv", MediaAttachment: strings.NewReader("a,b"), Caption: "both"},
	}
	dmsgs, err := b.SendMediaGroup(ctx, &bot.SendMediaGroupParams{ChatID: int64(dm), Media: docs})
	require.NoError(t, err)
	require.Len(t, dmsgs, 2)
	assert.Equal(t, "report.txt", dmsgs[0].Document.FileName, "attach://NAME is the name users see")
	assert.Equal(t, "text/csv", strings.Split(dmsgs[1].Document.MimeType, ";")[0])
	assert.Equal(t, "both", dmsgs[1].Caption)

	before := len(srv.Snapshot().BotMessages(dm))
	eleven := make([]models.InputMedia, 11)
	for i := range eleven {
		eleven[i] = &models.InputMediaDocument{Media: "attach://f" + string(rune('a'+i)), MediaAttachment: strings.NewReader("x")}
	}
	tests := []struct {
		name  string
		media []models.InputMedia
		want  string
	}{
		{"one item", docs[:1], "too few messages"},
		{"eleven items", eleven, "too much messages to send as an album"},
		{"photo with document", []models.InputMedia{
			&models.InputMediaPhoto{Media: "attach://p.png", MediaAttachment: bytes.NewReader(photos[0])},
			&models.InputMediaDocument{Media: "attach://d.txt", MediaAttachment: strings.NewReader("d")}}, "can't mix document and photo"},
		{"missing part", []models.InputMedia{&models.InputMediaDocument{Media: "attach://gone"}, &models.InputMediaDocument{Media: "attach://gone2"}}, "wrong file identifier"},
		{"caption over 1024", []models.InputMedia{
			&models.InputMediaDocument{Media: "attach://x1", MediaAttachment: strings.NewReader("x"), Caption: strings.Repeat("y", 1025)},
			&models.InputMediaDocument{Media: "attach://x2", MediaAttachment: strings.NewReader("x")}}, "message caption is too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "missing part" {
				// go-telegram/bot panics on attach:// without data, so this
				// one goes out as JSON, naming parts that do not exist.
				raw := postJSON(t, srv, "sendMediaGroup", map[string]any{"chat_id": dm,
					"media": []map[string]any{{"type": "document", "media": "attach://gone"}, {"type": "document", "media": "attach://gone2"}}})
				assert.Equal(t, http.StatusBadRequest, raw.Status)
				assert.Contains(t, string(raw.Text), tt.want)
				return
			}
			_, err := b.SendMediaGroup(ctx, &bot.SendMediaGroupParams{ChatID: int64(dm), Media: tt.media})
			require.Error(t, err)
			assert.ErrorIs(t, err, bot.ErrorBadRequest)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.Len(t, srv.Snapshot().BotMessages(dm), before, "a rejected album delivers nothing")
}

// TestSendMediaGroupFloodMidAlbum: flood control trips at the third item;
// the first two stay delivered and the error is a 400 naming the item.
func TestSendMediaGroupFloodMidAlbum(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	srv.EnableFloodControl(telegramtest.FloodLimits{Private: telegramtest.Rate{N: 2, Per: time.Minute}})
	var media []models.InputMedia
	for _, n := range []string{"a", "b", "c", "d"} {
		media = append(media, &models.InputMediaDocument{Media: "attach://" + n + ".txt", MediaAttachment: strings.NewReader(n)})
	}
	_, err := b.SendMediaGroup(context.Background(), &bot.SendMediaGroupParams{ChatID: int64(dm), Media: media})
	require.Error(t, err)
	assert.ErrorIs(t, err, bot.ErrorBadRequest, "not a TooManyRequestsError: the library sees a 400")
	var tmr *bot.TooManyRequestsError
	assert.False(t, errors.As(err, &tmr))
	assert.Contains(t, err.Error(), `failed to send message #3 with the error message "Too Many Requests: retry after`)
	delivered := srv.Snapshot().BotMessages(dm)
	require.Len(t, delivered, 2)
	assert.Equal(t, "a.txt", delivered[0].Document.FileName)
	assert.Equal(t, "b.txt", delivered[1].Document.FileName)

	_, err = b.SendMediaGroup(context.Background(), &bot.SendMediaGroupParams{ChatID: int64(dm), Media: []models.InputMedia{
		&models.InputMediaDocument{Media: "attach://e.txt", MediaAttachment: strings.NewReader("e")},
		&models.InputMediaDocument{Media: "attach://f.txt", MediaAttachment: strings.NewReader("f")}}})
	require.ErrorAs(t, err, &tmr, "a penalised chat refuses the first item: a plain 429")
}

func TestUserVoiceAudioAndVideoNote(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ogg := []byte("OggS fake opus")
	srv.UserSendsVoice(dm, jane, ogg, 3, "listen")
	srv.UserSendsAudio(dm, jane, "song.mp3", "", []byte("ID3 mp3"), 200, "")
	srv.UserSendsVideoNote(dm, jane, []byte("mp4 bytes"), 5)
	ups := pollUpdates(t, srv)
	require.Len(t, ups, 3)

	v := ups[0].Message.Voice
	require.NotNil(t, v)
	assert.Equal(t, 3, v.Duration)
	assert.Equal(t, "audio/ogg", v.MimeType)
	assert.Equal(t, int64(len(ogg)), v.FileSize)
	assert.Equal(t, "listen", ups[0].Message.Caption)
	f, err := b.GetFile(context.Background(), &bot.GetFileParams{FileID: v.FileID})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(f.FilePath, "voice/"), f.FilePath)
	_, body := download(t, b.FileDownloadLink(f))
	assert.Equal(t, ogg, body)

	a := ups[1].Message.Audio
	require.NotNil(t, a)
	assert.Equal(t, "song.mp3", a.FileName)
	assert.Equal(t, "audio/mpeg", a.MimeType)
	assert.Equal(t, 200, a.Duration)

	vn := ups[2].Message.VideoNote
	require.NotNil(t, vn)
	assert.Equal(t, 5, vn.Duration)
	assert.Positive(t, vn.Length)
	f, err = b.GetFile(context.Background(), &bot.GetFileParams{FileID: vn.FileID})
	require.NoError(t, err)
	resp, body := download(t, b.FileDownloadLink(f))
	assert.Equal(t, []byte("mp4 bytes"), body)
	assert.Equal(t, "video/mp4", resp.Header.Get("Content-Type"))
}

func TestUserAlbumForwardQuoteAndEdit(t *testing.T) {
	srv := newFake(t)
	msgs := srv.UserSendsAlbum(dm, jane, []telegramtest.AlbumItem{{Photo: testPNG(t, 20, 20)}, {Photo: testPNG(t, 30, 20)},
		{FileName: "spec.pdf", Data: []byte("%PDF")}}, "what changed?")
	require.Len(t, msgs, 3)
	ups := pollUpdates(t, srv)
	require.Len(t, ups, 3, "one update per item")
	group := ups[0].Message.MediaGroupID
	require.NotEmpty(t, group)
	for _, u := range ups {
		assert.Equal(t, group, u.Message.MediaGroupID)
	}
	assert.Equal(t, "what changed?", ups[0].Message.Caption)
	assert.Empty(t, ups[1].Message.Caption)
	assert.Equal(t, "spec.pdf", ups[2].Message.Document.FileName)

	date := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	srv.UserSends(dm, jane, "from bob", telegramtest.Forwarded(telegramtest.ForwardOrigin{Type: "user", Date: date, SenderUser: telegramtest.User{ID: 77, FirstName: "Bob", Username: "bob"}}))
	srv.UserSends(dm, jane, "from a hidden user", telegramtest.Forwarded(telegramtest.ForwardOrigin{Type: "hidden_user", SenderUserName: "Carol C."}))
	srv.UserSends(dm, jane, "from a channel", telegramtest.Forwarded(telegramtest.ForwardOrigin{Type: "channel", ChatID: -1009, ChatTitle: "News", ChatUsername: "news", AuthorSignature: "Dan"}))
	ups = pollUpdates(t, srv)
	require.Len(t, ups, 3)
	o := ups[0].Message.ForwardOrigin
	require.NotNil(t, o)
	require.Equal(t, models.MessageOriginTypeUser, o.Type)
	assert.Equal(t, "Bob", o.MessageOriginUser.SenderUser.FirstName)
	assert.Equal(t, int(date.Unix()), o.MessageOriginUser.Date)
	assert.Equal(t, int64(jane.ID), ups[0].Message.From.ID, "the forwarder is the sender")
	require.Equal(t, models.MessageOriginTypeHiddenUser, ups[1].Message.ForwardOrigin.Type)
	assert.Equal(t, "Carol C.", ups[1].Message.ForwardOrigin.MessageOriginHiddenUser.SenderUserName)
	require.Equal(t, models.MessageOriginTypeChannel, ups[2].Message.ForwardOrigin.Type)
	ch := ups[2].Message.ForwardOrigin.MessageOriginChannel
	assert.Equal(t, "News", ch.Chat.Title)
	require.NotNil(t, ch.AuthorSignature)
	assert.Equal(t, "Dan", *ch.AuthorSignature)

	b := newBot(t, srv)
	bm, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "The build is green. Deploy at noon?"})
	require.NoError(t, err)
	srv.UserSends(dm, jane, "yes, do it", telegramtest.ReplyingTo(telegramtest.MessageID(bm.ID)), telegramtest.Quoting("Deploy at noon?"))
	ups = pollUpdates(t, srv)
	require.Len(t, ups, 1)
	m := ups[0].Message
	require.NotNil(t, m.ReplyToMessage)
	assert.Equal(t, "The build is green. Deploy at noon?", m.ReplyToMessage.Text)
	require.NotNil(t, m.Quote)
	assert.Equal(t, "Deploy at noon?", m.Quote.Text)
	assert.Equal(t, 20, m.Quote.Position)

	orig := srv.UserSends(dm, jane, "rename the fucntion")
	pollUpdates(t, srv, "message", "callback_query") // like the bridge before it asked for edits
	srv.UserEdits(dm, orig.ID, "rename the function")
	assert.Empty(t, pollUpdates(t, srv, "message", "callback_query"), "edits are filtered unless asked for")
	pollUpdates(t, srv, "message", "edited_message", "callback_query")
	srv.UserEdits(dm, orig.ID, "rename the function, please")
	ups = pollUpdates(t, srv)
	require.Len(t, ups, 1)
	require.Nil(t, ups[0].Message)
	e := ups[0].EditedMessage
	require.NotNil(t, e)
	assert.Equal(t, int(orig.ID), e.ID)
	assert.Equal(t, "rename the function, please", e.Text)
	assert.NotZero(t, e.EditDate)
}

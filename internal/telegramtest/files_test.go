package telegramtest_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// testImage is a deterministic gradient, so every encoding of it is too.
func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: uint8(x ^ y), A: 255})
		}
	}
	return img
}

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, testImage(w, h)))
	return buf.Bytes()
}

func testJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, testImage(w, h), nil))
	return buf.Bytes()
}

// download fetches a URL the way a bridge would, with a plain http.Get.
func download(t *testing.T, link string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestUserPhotoThroughHandlerGetFileAndDownload(t *testing.T) {
	tests := []struct {
		name     string
		img      []byte
		w, h     int
		path     string
		mimeType string
	}{
		{"png landscape", testPNG(t, 200, 100), 200, 100, "photos/file_0.png", "image/png"},
		{"jpeg portrait", testJPEG(t, 60, 300), 60, 300, "photos/file_0.jpg", "image/jpeg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			// The caption handler matches on caption_entities, so it only
			// fires if the fake renders the caption and its entities where
			// go-telegram/bot looks for them.
			viaCaption := make(collector, 1)
			others, _ := startBot(t, srv, bot.WithPhotoCaptionHandler("new", bot.MatchTypeCommandStartOnly, viaCaption.handle))
			b := newBot(t, srv)
			ctx := context.Background()

			sent := srv.UserSendsPhoto(dm, jane, tc.img, "/new what is this?")
			u := viaCaption.next(t)
			require.NotNil(t, u.Message)
			assert.Empty(t, others, "the photo must not fall through to the default handler")
			assert.Equal(t, "/new what is this?", u.Message.Caption)
			assert.Empty(t, u.Message.Text)
			assert.Equal(t, []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Length: 4}}, u.Message.CaptionEntities)
			require.Len(t, u.Message.Photo, 2)
			largest, small := u.Message.Photo[len(u.Message.Photo)-1], u.Message.Photo[0]
			assert.Equal(t, tc.w, largest.Width)
			assert.Equal(t, tc.h, largest.Height)
			assert.Equal(t, len(tc.img), largest.FileSize)
			assert.LessOrEqual(t, max(small.Width, small.Height), 90, "photo[0] is a thumbnail")
			assert.Less(t, small.Width*small.Height, largest.Width*largest.Height)
			assert.NotEqual(t, small.FileID, largest.FileID)
			require.Len(t, sent.Photo, 2)
			assert.Equal(t, sent.Photo[1].FileID, largest.FileID, "the returned Message matches the update")

			file, err := b.GetFile(ctx, &bot.GetFileParams{FileID: largest.FileID})
			require.NoError(t, err)
			assert.Equal(t, &models.File{FileID: largest.FileID, FileUniqueID: largest.FileUniqueID, FileSize: int64(len(tc.img)), FilePath: tc.path}, file)
			again, err := b.GetFile(ctx, &bot.GetFileParams{FileID: largest.FileID})
			require.NoError(t, err)
			assert.Equal(t, file.FilePath, again.FilePath, "a path stays valid, so asking again returns it")

			resp, body := download(t, b.FileDownloadLink(file))
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tc.mimeType, resp.Header.Get("Content-Type"))
			assert.Equal(t, tc.img, body, "the largest size is the exact bytes the user sent")

			thumbFile, err := b.GetFile(ctx, &bot.GetFileParams{FileID: small.FileID})
			require.NoError(t, err)
			assert.Equal(t, "photos/file_1.jpg", thumbFile.FilePath)
			_, thumb := download(t, b.FileDownloadLink(thumbFile))
			assert.NotEqual(t, tc.img, thumb, "photo[0] must not be the original, or a bridge using it would pass")
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(thumb))
			require.NoError(t, err, "the thumbnail is a real JPEG")
			assert.Equal(t, [2]int{small.Width, small.Height}, [2]int{cfg.Width, cfg.Height})
			assert.Equal(t, small.FileSize, len(thumb))
		})
	}
}

func TestUserDocumentThroughHandlerGetFileAndDownload(t *testing.T) {
	srv := newFake(t)
	got, _ := startBot(t, srv)
	b := newBot(t, srv)
	ctx := context.Background()
	data := []byte("%PDF-1.4 not really a pdf\x00\xff")

	sent := srv.UserSendsDocument(forum, jane, "report.pdf", "", data, "<b>raw</b>", telegramtest.InTopic(topic))
	u := got.next(t)
	require.NotNil(t, u.Message)
	require.NotNil(t, u.Message.Document)
	d := u.Message.Document
	assert.Equal(t, "report.pdf", d.FileName)
	assert.Equal(t, "application/pdf", d.MimeType, "an empty MIME type is guessed from the name")
	assert.Equal(t, int64(len(data)), d.FileSize)
	assert.NotEmpty(t, d.FileUniqueID)
	assert.Equal(t, sent.Document.FileID, d.FileID)
	assert.Equal(t, "<b>raw</b>", u.Message.Caption, "user captions are not parsed as HTML")
	assert.Empty(t, u.Message.CaptionEntities)
	assert.Nil(t, u.Message.Photo)
	assert.Equal(t, int(topic), u.Message.MessageThreadID)
	assert.True(t, u.Message.IsTopicMessage)

	file, err := b.GetFile(ctx, &bot.GetFileParams{FileID: d.FileID})
	require.NoError(t, err)
	assert.Equal(t, "documents/file_0.pdf", file.FilePath)
	resp, body := download(t, b.FileDownloadLink(file))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))
	assert.Equal(t, data, body)

	// The bot may forward what it received by file_id, but not as the
	// wrong kind of file.
	fwd, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm), Document: &models.InputFileString{Data: d.FileID}})
	require.NoError(t, err)
	assert.Equal(t, d.FileID, fwd.Document.FileID)
	assert.Equal(t, d.FileUniqueID, fwd.Document.FileUniqueID)
	photo := srv.UserSendsPhoto(dm, jane, testPNG(t, 10, 10), "")
	_, err = b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm), Document: &models.InputFileString{Data: photo.Photo[1].FileID}})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	assert.Contains(t, err.Error(), "can't use file of type Photo as Document")

	stored, ok := srv.Message(forum, sent.ID)
	require.True(t, ok)
	assert.Equal(t, "<b>raw</b>", stored.Text, "Text holds the caption, as for bot documents")
	assert.Equal(t, data, stored.Document.Data)
	docs := srv.Documents()
	require.Len(t, docs, 1, "Documents lists what the bot sent, not what users sent")
	assert.Equal(t, telegramtest.MessageID(fwd.ID), docs[0].ID)
}

func TestGetFileErrors(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	exact := srv.UserSendsDocument(dm, jane, "exact.bin", "application/octet-stream", make([]byte, telegramtest.MaxDownload), "")
	over := srv.UserSendsDocument(dm, jane, "over.bin", "application/octet-stream", make([]byte, telegramtest.MaxDownload+1), "")
	tests := []struct {
		name   string
		fileID string
		want   string // error text; empty for success
	}{
		{"unknown id", "AgACAgIAAxkBAAI999999", "Bad Request: invalid file_id"},
		{"empty id", "", "Bad Request: invalid file_id"},
		{"exactly 20 MB", exact.Document.FileID, ""},
		{"over 20 MB", over.Document.FileID, "Bad Request: file is too big"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, err := b.GetFile(context.Background(), &bot.GetFileParams{FileID: tc.fileID})
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, int64(telegramtest.MaxDownload), file.FileSize)
				return
			}
			require.ErrorIs(t, err, bot.ErrorBadRequest)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	calls := srv.Snapshot().CallsOf("getFile")
	require.Len(t, calls, len(tests), "getFile is in the call log")
	assert.Equal(t, over.Document.FileID, calls[3].Params["file_id"])
	assert.Equal(t, 400, calls[3].Status)
	assert.Equal(t, "Bad Request: file is too big", calls[3].Description)
}

func TestFileDownloadRoute(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	img := testPNG(t, 20, 20)
	sent := srv.UserSendsPhoto(dm, jane, img, "")
	base := srv.URL() + "/file/bot"

	// Before getFile no path exists, even the one getFile will return.
	resp, _ := download(t, base+srv.Token()+"/photos/file_0.png")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	file, err := b.GetFile(context.Background(), &bot.GetFileParams{FileID: sent.Photo[1].FileID})
	require.NoError(t, err)
	require.Equal(t, "photos/file_0.png", file.FilePath)

	head, err := http.Head(base + srv.Token() + "/" + file.FilePath)
	require.NoError(t, err)
	require.NoError(t, head.Body.Close())
	post, err := http.Post(base+srv.Token()+"/"+file.FilePath, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	require.NoError(t, post.Body.Close())

	tests := []struct {
		name   string
		url    string
		status int
		body   []byte
	}{
		{"right token and path", base + srv.Token() + "/" + file.FilePath, 200, img},
		{"wrong token", base + "123456:wrong/" + file.FilePath, 401, []byte("Unauthorized\n")},
		{"unknown path", base + srv.Token() + "/photos/file_9.png", 404, []byte("Not Found\n")},
		{"no path", base + srv.Token(), 404, []byte("Not Found\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := download(t, tc.url)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.body, body)
		})
	}
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Equal(t, int64(len(img)), head.ContentLength)
	assert.Equal(t, http.StatusMethodNotAllowed, post.StatusCode)

	var logged []string
	for _, c := range srv.Snapshot().CallsOf(telegramtest.FileDownload) {
		logged = append(logged, c.Params["file_path"]+" "+http.StatusText(c.Status))
	}
	assert.Equal(t, []string{
		"photos/file_0.png Not Found", "photos/file_0.png OK", "photos/file_0.png Method Not Allowed",
		"photos/file_0.png OK", "photos/file_0.png Unauthorized", "photos/file_9.png Not Found", " Not Found",
	}, logged, "downloads are in the call log")
}

func TestFileDownloadFaults(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	sent := srv.UserSendsDocument(dm, jane, "a.txt", "text/plain", []byte("abc"), "")
	file, err := b.GetFile(context.Background(), &bot.GetFileParams{FileID: sent.Document.FileID})
	require.NoError(t, err)

	srv.FailNext(telegramtest.FileDownload, 1, 502, "", 0)
	resp, _ := download(t, b.FileDownloadLink(file))
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode, "faults aimed at downloads apply to them")
	resp, body := download(t, b.FileDownloadLink(file))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []byte("abc"), body)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
}

func TestUserMediaMisuse(t *testing.T) {
	srv := newFake(t)
	tests := []struct {
		name string
		send func() error
		want string
	}{
		{"photo that is not an image", func() error {
			_, err := srv.TryUserSendsPhoto(dm, jane, []byte("GIF89a? no"), "")
			return err
		}, "decode photo"},
		{"photo to an unknown chat", func() error {
			_, err := srv.TryUserSendsPhoto(999, jane, testPNG(t, 4, 4), "")
			return err
		}, "not registered"},
		{"document to a missing topic", func() error {
			_, err := srv.TryUserSendsDocument(forum, jane, "a.txt", "", []byte("a"), "", telegramtest.InTopic(99))
			return err
		}, "topic 99 does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, tc.send(), tc.want)
		})
	}
	assert.Empty(t, srv.Snapshot().Pending, "a refused user message queues nothing")

	// Refused sends store no file either: the next file gets the id a
	// fresh fake gives its first one.
	ok := srv.UserSendsDocument(dm, jane, "b.txt", "", []byte("b"), "")
	fresh := newFake(t).UserSendsDocument(dm, jane, "b.txt", "", []byte("b"), "")
	assert.Equal(t, fresh.Document.FileID, ok.Document.FileID)
}

func TestRejectedSendDocumentStoresNoFile(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	ctx := context.Background()
	_, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm), Caption: strings.Repeat("c", 1025),
		Document: &models.InputFileUpload{Filename: "a.bin", Data: bytes.NewReader([]byte{1})}})
	require.ErrorIs(t, err, bot.ErrorBadRequest)
	sent, err := b.SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm),
		Document: &models.InputFileUpload{Filename: "a.bin", Data: bytes.NewReader([]byte{1})}})
	require.NoError(t, err)

	fresh := newFake(t)
	first, err := newBot(t, fresh).SendDocument(ctx, &bot.SendDocumentParams{ChatID: int64(dm),
		Document: &models.InputFileUpload{Filename: "a.bin", Data: bytes.NewReader([]byte{1})}})
	require.NoError(t, err)
	assert.Equal(t, first.Document.FileID, sent.Document.FileID, "the refused upload must not have taken an id")

	file, err := b.GetFile(ctx, &bot.GetFileParams{FileID: sent.Document.FileID})
	require.NoError(t, err, "files the bot uploaded can be downloaded too")
	_, body := download(t, b.FileDownloadLink(file))
	assert.Equal(t, []byte{1}, body)
}

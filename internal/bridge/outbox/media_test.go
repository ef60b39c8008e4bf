package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/telegramtest"
)

// Media messages go through the real go-telegram/bot client to the in-repo
// fake Bot API, so the multipart uploads are checked end to end.

const chat = telegramtest.ChatID(4242)

func mediaRig(t *testing.T, opts ...telegramtest.Option) (*telegramtest.Server, *bot.Bot, string) {
	t.Helper()
	srv := telegramtest.New(t, opts...)
	srv.AddChat(telegramtest.Chat{ID: chat, Type: telegramtest.Private, FirstName: "Ann"})
	b, err := bot.New(srv.Token(), bot.WithServerURL(srv.URL()), bot.WithSkipGetMe(),
		bot.WithHTTPClient(time.Second, &http.Client{Timeout: 20 * time.Second}))
	require.NoError(t, err)
	return srv, b, t.TempDir()
}

func newMediaOutbox(t *testing.T, b *bot.Bot, j outbox.Journal) *outbox.Outbox {
	t.Helper()
	o := outbox.New(b, outbox.Options{PrivateInterval: 10 * time.Millisecond, PrivateBurst: 10, GlobalRate: 1000, GlobalBurst: 100,
		Journal: j, Jitter: func(time.Duration) time.Duration { return 0 }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = o.Close(ctx)
	})
	return o
}

func write(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, rel), data, 0o600))
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func sent(t *testing.T, m *outbox.Message) (outbox.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return m.Sent().Wait(ctx)
}

func TestSendMediaDocumentPhotoAndAlbums(t *testing.T) {
	srv, b, dir := mediaRig(t)
	o := newMediaOutbox(t, b, nil)
	key := outbox.ChatKey{Chat: int64(chat)}
	ctx := context.Background()
	write(t, dir, "out/report.txt", []byte("the report"))
	write(t, dir, "out/a.png", pngOf(t, 30, 20))
	write(t, dir, "out/b.png", pngOf(t, 20, 30))
	write(t, dir, "out/c.png", pngOf(t, 40, 40))
	write(t, dir, "out/x.csv", []byte("a,b"))

	res, err := sent(t, o.SendMedia(ctx, key, outbox.High, outbox.Media{
		Files:    []outbox.MediaFile{{Kind: outbox.MediaDocument, Dir: dir, Path: "out/report.txt", Name: "Q3 report.txt", Caption: "<b>report</b>"}},
		Keyboard: map[string]any{"inline_keyboard": [][]map[string]string{{{"text": "ok", "callback_data": "k"}}}},
	}, outbox.SendOptions{}))
	require.NoError(t, err)
	docs := srv.Snapshot().Documents()
	require.Len(t, docs, 1)
	assert.Equal(t, "Q3 report.txt", docs[0].Document.FileName)
	assert.Equal(t, []byte("the report"), docs[0].Document.Data)
	assert.Equal(t, "report", docs[0].Text)
	assert.True(t, docs[0].HasButton("k"))
	assert.Equal(t, telegramtest.MessageID(res.MessageID), docs[0].ID)

	_, err = sent(t, o.SendMedia(ctx, key, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaPhoto, Dir: dir, Path: "out/a.png", Caption: "chart"}}}, outbox.SendOptions{ReplyTo: outbox.MessageID(docs[0].ID)}))
	require.NoError(t, err)
	photos := srv.Snapshot().Photos()
	require.Len(t, photos, 1)
	assert.Equal(t, pngOf(t, 30, 20), photos[0].PhotoData)
	assert.Equal(t, docs[0].ID, photos[0].ReplyTo)

	album := []outbox.MediaFile{
		{Kind: outbox.MediaPhoto, Dir: dir, Path: "out/a.png", Caption: "three"},
		{Kind: outbox.MediaPhoto, Dir: dir, Path: "out/b.png"},
		{Kind: outbox.MediaPhoto, Dir: dir, Path: "out/c.png"},
	}
	res, err = sent(t, o.SendMedia(ctx, key, outbox.High, outbox.Media{Files: album}, outbox.SendOptions{}))
	require.NoError(t, err)
	first, _ := srv.Snapshot().Message(chat, telegramtest.MessageID(res.MessageID))
	items := srv.Snapshot().Album(chat, first.MediaGroupID)
	require.Len(t, items, 3, "one album")
	assert.Equal(t, pngOf(t, 20, 30), items[1].PhotoData)
	assert.Equal(t, "three", items[0].Text)
	assert.Len(t, srv.Snapshot().CallsOf("sendMediaGroup"), 1, "one request")

	_, err = sent(t, o.SendMedia(ctx, key, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "out/report.txt"},
		{Kind: outbox.MediaDocument, Dir: dir, Path: "out/x.csv"},
		{Kind: outbox.MediaDocument, Dir: dir, Path: "out/report.txt"},
	}}, outbox.SendOptions{}))
	require.NoError(t, err)
	docs = srv.Snapshot().Documents()
	require.Len(t, docs, 4)
	assert.Equal(t, []string{"report.txt", "x.csv", "report-2.txt"},
		[]string{docs[1].Document.FileName, docs[2].Document.FileName, docs[3].Document.FileName}, "names in an album are unique")
}

func TestSendMediaRefusesBadInput(t *testing.T) {
	srv, b, dir := mediaRig(t)
	o := newMediaOutbox(t, b, nil)
	key := outbox.ChatKey{Chat: int64(chat)}
	outside := t.TempDir()
	write(t, outside, "secret.txt", []byte("secret"))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir"), 0o700))
	doc := func(p string) outbox.MediaFile {
		return outbox.MediaFile{Kind: outbox.MediaDocument, Dir: dir, Path: p}
	}
	long := make([]byte, 1025)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name  string
		media outbox.Media
		want  error
	}{
		{"no files", outbox.Media{}, outbox.ErrInvalid},
		{"eleven files", outbox.Media{Files: []outbox.MediaFile{doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a"), doc("a")}}, outbox.ErrInvalid},
		{"photo and document", outbox.Media{Files: []outbox.MediaFile{doc("a"), {Kind: outbox.MediaPhoto, Dir: dir, Path: "b"}}}, outbox.ErrInvalid},
		{"keyboard on an album", outbox.Media{Files: []outbox.MediaFile{doc("a"), doc("b")}, Keyboard: []int{1}}, outbox.ErrInvalid},
		{"path leaving its directory", outbox.Media{Files: []outbox.MediaFile{doc("../x")}}, outbox.ErrInvalid},
		{"caption too long", outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument, Dir: dir, Path: "a", Caption: string(long)}}}, outbox.ErrInvalid},
		{"missing file", outbox.Media{Files: []outbox.MediaFile{doc("missing.txt")}}, outbox.ErrMediaFile},
		{"symlink out of the directory", outbox.Media{Files: []outbox.MediaFile{doc("link.txt")}}, outbox.ErrMediaFile},
		{"a directory", outbox.Media{Files: []outbox.MediaFile{doc("adir")}}, outbox.ErrMediaFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sent(t, o.SendMedia(context.Background(), key, outbox.High, tt.media, outbox.SendOptions{}))
			assert.ErrorIs(t, err, tt.want)
		})
	}
	assert.Empty(t, srv.Snapshot().BotMessages(chat), "nothing was sent, and nothing retried forever")
}

// TestSendMediaFallsBackWhileTheFileMoves: a send names the file's final
// place and where it is until then.
func TestSendMediaFallsBackWhileTheFileMoves(t *testing.T) {
	srv, b, dir := mediaRig(t)
	o := newMediaOutbox(t, b, nil)
	write(t, dir, "outbox/n.txt", []byte("notes"))
	_, err := sent(t, o.SendMedia(context.Background(), outbox.ChatKey{Chat: int64(chat)}, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "sent/n.txt", Fallback: "outbox/n.txt"}}}, outbox.SendOptions{}))
	require.NoError(t, err)
	docs := srv.Snapshot().Documents()
	require.Len(t, docs, 1)
	assert.Equal(t, "n.txt", docs[0].Document.FileName)
	assert.Equal(t, []byte("notes"), docs[0].Document.Data)
}

// TestSendMediaMidAlbumFlood: Telegram delivers the first two items, then
// refuses the third with a 400 naming it. The outbox waits as told and sends
// only the rest: every file arrives exactly once, in order.
func TestSendMediaMidAlbumFlood(t *testing.T) {
	srv, b, dir := mediaRig(t, telegramtest.WithFloodControl(telegramtest.FloodLimits{Private: telegramtest.Rate{N: 2, Per: 2 * time.Second}}))
	o := newMediaOutbox(t, b, nil)
	var files []outbox.MediaFile
	for _, n := range []string{"a", "b", "c", "d"} {
		write(t, dir, n+".txt", []byte(n))
		files = append(files, outbox.MediaFile{Kind: outbox.MediaDocument, Dir: dir, Path: n + ".txt"})
	}
	_, err := sent(t, o.SendMedia(context.Background(), outbox.ChatKey{Chat: int64(chat)}, outbox.High, outbox.Media{Files: files}, outbox.SendOptions{}))
	require.NoError(t, err)
	var names []string
	for _, d := range srv.Snapshot().Documents() {
		names = append(names, d.Document.FileName)
	}
	assert.Equal(t, []string{"a.txt", "b.txt", "c.txt", "d.txt"}, names)
	assert.Empty(t, srv.ViolationsOfRetryAfter(), "the rest waited for retry_after")
	calls := srv.Snapshot().CallsOf("sendMediaGroup")
	require.Len(t, calls, 2)
	assert.Equal(t, http.StatusBadRequest, calls[0].Status)
}

type memJournal struct {
	mu      sync.Mutex
	next    outbox.JournalID
	entries map[outbox.JournalID]outbox.JournalEntry
}

func (j *memJournal) Save(_ context.Context, key outbox.ChatKey, kind string, payload []byte) (outbox.JournalID, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	if j.entries == nil {
		j.entries = map[outbox.JournalID]outbox.JournalEntry{}
	}
	j.entries[j.next] = outbox.JournalEntry{ID: j.next, Key: key, Kind: kind, Payload: append([]byte(nil), payload...)}
	return j.next, nil
}

func (j *memJournal) Done(_ context.Context, id outbox.JournalID) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.entries, id)
	return nil
}

func (j *memJournal) pending() []outbox.JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []outbox.JournalEntry
	for _, e := range j.entries {
		out = append(out, e)
	}
	return out
}

// TestSendMediaSurvivesACrash: a journaled media send the previous run
// could not deliver is sent by the next one, exactly once.
func TestSendMediaSurvivesACrash(t *testing.T) {
	srv, b, dir := mediaRig(t)
	j := &memJournal{}
	write(t, dir, "outbox/plan.md", []byte("# plan"))
	srv.Delay("sendDocument", time.Minute)
	first := outbox.New(b, outbox.Options{Journal: j})
	m := first.SendMedia(context.Background(), outbox.ChatKey{Chat: int64(chat)}, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "sent/plan.md", Fallback: "outbox/plan.md"}}}, outbox.SendOptions{Tag: "file"})
	srv.WaitFor(10*time.Second, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("sendDocument")) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := first.Close(ctx) // the "crash": the upload never finishes
	cancel()
	var unflushed *outbox.UnflushedError
	require.ErrorAs(t, err, &unflushed)
	_, err = sent(t, m)
	require.Error(t, err)

	left := j.pending()
	require.Len(t, left, 1)
	assert.Equal(t, outbox.KindMedia, left[0].Kind)
	assert.Equal(t, "file", outbox.EntryTag(left[0]))
	files := outbox.MediaFiles(left[0])
	require.Len(t, files, 1)
	assert.Equal(t, "outbox/plan.md", files[0].Fallback)

	srv.Delay("sendDocument", 0)
	second := newMediaOutbox(t, b, j)
	msgs, err := second.Restore(context.Background(), left)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	_, err = sent(t, msgs[0])
	require.NoError(t, err)
	docs := srv.Snapshot().Documents()
	require.Len(t, docs, 1, "delivered once")
	assert.Equal(t, []byte("# plan"), docs[0].Document.Data)
	assert.Empty(t, j.pending(), "and marked done")
	assert.False(t, errors.Is(err, outbox.ErrMediaFile))
}

package outbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/telegramtest"
)

// The directories files are sent from are writable by Claude's tools, so
// a file may become a FIFO or a link to a secret between the caller's
// check and the upload (issue 22 §1).

// unblockFIFO opens path for writing once the test is over, so that a
// reader stuck on it (the bug under test) lets the test binary end.
func unblockFIFO(t *testing.T, path string) {
	t.Cleanup(func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

// TestSendMediaNeverBlocksOnAFIFO: a journaled send replayed after a
// restart whose file is now a FIFO fails at once as unavailable (and is not
// replayed again), and the chat's next message still goes out.
func TestSendMediaNeverBlocksOnAFIFO(t *testing.T) {
	srv, b, dir := mediaRig(t)
	j := &memJournal{}
	key := outbox.ChatKey{Chat: int64(chat)}
	write(t, dir, "outbox/report.txt", []byte("first run"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sent"), 0o700))
	srv.Delay("sendDocument", time.Minute)
	first := outbox.New(b, outbox.Options{Journal: j})
	first.SendMedia(context.Background(), key, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "sent/report.txt", Fallback: "outbox/report.txt"}}}, outbox.SendOptions{Tag: "file"})
	srv.WaitFor(10*time.Second, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("sendDocument")) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_ = first.Close(ctx) // the "crash": the upload never finished
	cancel()
	srv.Delay("sendDocument", 0)
	left := j.pending()
	require.Len(t, left, 1)
	// Meanwhile the file was moved to sent/ and a tool swapped it.
	require.NoError(t, os.Remove(filepath.Join(dir, "outbox/report.txt")))
	fifo := filepath.Join(dir, "sent/report.txt")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	unblockFIFO(t, fifo)

	second := newMediaOutbox(t, b, j)
	msgs, err := second.Restore(context.Background(), left)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	done := make(chan error, 1)
	go func() {
		_, err := msgs[0].Sent().Wait(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, outbox.ErrMediaFile)
	case <-time.After(10 * time.Second):
		t.Fatal("the replayed send blocked on the FIFO")
	}
	assert.Empty(t, j.pending(), "not replayed again")
	_, err = sent(t, second.Send(context.Background(), key, outbox.High, outbox.Content{Text: "still here"}, outbox.SendOptions{}))
	require.NoError(t, err, "the chat's next message goes out")
	assert.Empty(t, srv.Snapshot().Documents())
}

// TestSendMediaSendsTheDescriptorItWasGiven: with MediaFile.File, the file
// the caller checked is sent, on every attempt from its first byte, however
// its path changes meanwhile; it is closed once the send is settled.
func TestSendMediaSendsTheDescriptorItWasGiven(t *testing.T) {
	srv, b, dir := mediaRig(t)
	o := newMediaOutbox(t, b, &memJournal{})
	write(t, dir, ".env", []byte("SECRET=1"))
	write(t, dir, "sent/a.txt", []byte("checked a"))
	write(t, dir, "sent/b.txt", []byte("checked b"))
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, "sent", name))
		require.NoError(t, err)
		return f
	}
	fa, fb := open("a.txt"), open("b.txt")
	// The first attempt is refused, so the retry reads the files again.
	stop := srv.FailWhen(func(c telegramtest.Call) bool { return c.Method == "sendMediaGroup" },
		telegramtest.Fault{Code: 429, RetryAfter: 1})
	m := o.SendMedia(context.Background(), outbox.ChatKey{Chat: int64(chat)}, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "sent/a.txt", File: fa},
		{Kind: outbox.MediaDocument, Dir: dir, Path: "sent/b.txt", File: fb}}}, outbox.SendOptions{Tag: "file"})
	srv.WaitFor(10*time.Second, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("sendMediaGroup")) >= 1 })
	// A tool swaps both paths: one for a link to the secret, one for a FIFO.
	require.NoError(t, os.Remove(filepath.Join(dir, "sent/a.txt")))
	require.NoError(t, os.Symlink("../.env", filepath.Join(dir, "sent/a.txt")))
	require.NoError(t, os.Remove(filepath.Join(dir, "sent/b.txt")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "sent/b.txt"), 0o600))
	unblockFIFO(t, filepath.Join(dir, "sent/b.txt"))
	stop()
	_, err := sent(t, m)
	require.NoError(t, err)
	docs := srv.Snapshot().Documents()
	require.Len(t, docs, 2)
	assert.Equal(t, "checked a", string(docs[0].Document.Data))
	assert.Equal(t, "checked b", string(docs[1].Document.Data))
	for _, f := range []*os.File{fa, fb} {
		_, err := f.Stat()
		assert.ErrorIs(t, err, os.ErrClosed, "the outbox closed %s", f.Name())
	}

	// A send refused before it is queued closes its file too.
	fc := open("../.env")
	_, err = sent(t, o.SendMedia(context.Background(), outbox.ChatKey{}, outbox.High, outbox.Media{Files: []outbox.MediaFile{
		{Kind: outbox.MediaDocument, Dir: dir, Path: "x", File: fc}}}, outbox.SendOptions{}))
	require.ErrorIs(t, err, outbox.ErrInvalid)
	_, err = fc.Stat()
	assert.ErrorIs(t, err, os.ErrClosed)
}

// stuckAPI is a Telegram client whose sendMessage never returns until the
// test ends, whatever its context says: a call stuck in the kernel.
type stuckAPI struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stuckAPI) SendMessage(context.Context, *bot.SendMessageParams) (*models.Message, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return nil, errors.New("released")
}

func (s *stuckAPI) EditMessageText(context.Context, *bot.EditMessageTextParams) (*models.Message, error) {
	return nil, errors.New("unused")
}

func (s *stuckAPI) DeleteMessage(context.Context, *bot.DeleteMessageParams) (bool, error) {
	return false, errors.New("unused")
}

func (s *stuckAPI) SendChatAction(context.Context, *bot.SendChatActionParams) (bool, error) {
	return true, nil
}

// TestCloseGivesUpOnAStuckWorker: Close returns soon after its deadline
// even when a worker is stuck in a call that ignores its context, says so,
// and the stuck send stays journaled for the next start.
func TestCloseGivesUpOnAStuckWorker(t *testing.T) {
	api := &stuckAPI{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(api.release) })
	j := &memJournal{}
	o := outbox.New(api, outbox.Options{Journal: j})
	o.Send(context.Background(), outbox.ChatKey{Chat: 7}, outbox.High, outbox.Content{Text: "final answer"}, outbox.SendOptions{Tag: "final"})
	select {
	case <-api.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the send never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- o.Close(ctx) }()
	select {
	case err := <-errc:
		var ue *outbox.UnflushedError
		require.ErrorAs(t, err, &ue)
		assert.Equal(t, 1, ue.Stuck)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "1 chats given up on")
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited on the stuck worker past its deadline")
	}
	assert.Len(t, j.pending(), 1, "the stuck send stays journaled")
}

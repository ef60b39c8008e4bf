package telegramtest_test

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the calling goroutine, so tests can check that the fake fails a test.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *fatalRecorder) Helper() {}

// fatalOf runs f on its own goroutine and returns what Fatalf recorded.
func (r *fatalRecorder) fatalOf(f func()) string {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := r.msg
	r.msg = ""
	return msg
}

func TestTestSideMisuseFailsTheTest(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	srv := telegramtest.New(rec)
	srv.AddChat(telegramtest.Chat{ID: dm})
	b := newBot(t, srv)
	msg, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "x", ReplyMarkup: keyboardOf([]string{"ok"})})
	require.NoError(t, err)

	assert.Empty(t, rec.fatalOf(func() { srv.UserPresses(dm, telegramtest.MessageID(msg.ID), "ok") }))
	assert.Contains(t, rec.fatalOf(func() { srv.UserPresses(dm, telegramtest.MessageID(msg.ID), "stale") }), "no button")
	assert.Contains(t, rec.fatalOf(func() { srv.UserPresses(dm, 99, "ok") }), "no such message")
	assert.Contains(t, rec.fatalOf(func() { srv.UserSends(999, jane, "hi") }), "not registered")
	assert.Contains(t, rec.fatalOf(func() { srv.UserSends(dm, jane, "hi", telegramtest.InTopic(3)) }), "topic 3 does not exist")
	assert.Contains(t, rec.fatalOf(func() { srv.AddChat(telegramtest.Chat{ID: dm}) }), "registered twice")
	assert.Contains(t, rec.fatalOf(func() {
		srv.WaitFor(time.Millisecond, func(*telegramtest.Snapshot) bool { return false })
	}), "context deadline exceeded")
}

func TestSnapshotsAreDeepCopies(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(dm), Text: "<b>x</b>", ParseMode: "HTML", ReplyMarkup: keyboardOf([]string{"a"})})
	require.NoError(t, err)
	sn := srv.Snapshot()
	m := sn.Messages(dm)[0]
	m.Keyboard[0][0].CallbackData = "mutated"
	m.Entities[0].Type = "mutated"
	sn.Calls[0].Params["text"] = "mutated"

	fresh, _ := srv.Message(dm, 1)
	assert.Equal(t, "a", fresh.Keyboard[0][0].CallbackData)
	assert.Equal(t, "bold", fresh.Entities[0].Type)
	assert.Equal(t, "<b>x</b>", srv.Calls()[0].Params["text"])
}

func TestConcurrentClientsGetUniqueIDs(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	const perChat = 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*perChat)
	for _, chat := range []telegramtest.ChatID{dm, group} {
		for i := range perChat {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(chat), Text: fmt.Sprint(i)})
				errs <- err
			}()
		}
	}
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool {
		return len(s.Messages(dm)) == perChat && len(s.Messages(group)) == perChat
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, chat := range []telegramtest.ChatID{dm, group} {
		var ids []int
		for _, m := range srv.Messages(chat) {
			ids = append(ids, int(m.ID))
		}
		sort.Ints(ids)
		for i, id := range ids {
			assert.Equal(t, i+1, id, "chat %d ids must be 1..%d without gaps", chat, perChat)
		}
	}
}

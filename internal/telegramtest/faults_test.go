package telegramtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

func sendTo(b *bot.Bot, chat telegramtest.ChatID, text string) error {
	_, err := b.SendMessage(context.Background(), &bot.SendMessageParams{ChatID: int64(chat), Text: text})
	return err
}

func retryAfter(t *testing.T, err error) int {
	t.Helper()
	var tmr *bot.TooManyRequestsError
	require.True(t, errors.As(err, &tmr), "want a 429, got %v", err)
	return tmr.RetryAfter
}

func TestFloodControlPrivateChat(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now), telegramtest.WithFloodControl(telegramtest.DefaultFloodLimits()))
	b := newBot(t, srv)

	for i := range 3 { // the burst
		require.NoError(t, sendTo(b, dm, fmt.Sprint("burst ", i)))
	}
	assert.Equal(t, 3, retryAfter(t, sendTo(b, dm, "too fast")))
	require.NoError(t, sendTo(b, group, "other chats are unaffected"))

	clock.Advance(time.Second)
	_, err := b.SendChatAction(context.Background(), &bot.SendChatActionParams{ChatID: int64(dm), Action: "typing"})
	assert.Equal(t, 2, retryAfter(t, err), "a penalised chat refuses every method")
	violations := srv.ViolationsOfRetryAfter()
	require.Len(t, violations, 1)
	assert.Equal(t, "sendChatAction", violations[0].Call.Method)
	assert.Equal(t, 3, violations[0].Penalty.RetryAfter)
	assert.Equal(t, violations[0].Penalty.Time.Add(3*time.Second), violations[0].Until)

	clock.Advance(2 * time.Second)
	require.NoError(t, sendTo(b, dm, "after the wait"))
	assert.Len(t, srv.ViolationsOfRetryAfter(), 1, "waiting out retry_after is not a violation")
	assert.Len(t, srv.Snapshot().BotMessages(dm), 4, "refused sends store nothing")
}

func TestFloodControlGroupSharesSendsAndEdits(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	srv.EnableFloodControl(telegramtest.DefaultFloodLimits())
	b := newBot(t, srv)
	ctx := context.Background()

	msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(group), Text: "v0"})
	require.NoError(t, err)
	for i := 1; i < 20; i++ { // 1 send + 19 edits = 20 per minute
		_, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(group), MessageID: msg.ID, Text: fmt.Sprint("v", i)})
		require.NoError(t, err, "edit %d", i)
	}
	assert.Equal(t, 60, retryAfter(t, sendTo(b, group, "21st")))

	clock.Advance(30 * time.Second)
	assert.Equal(t, 30, retryAfter(t, sendTo(b, group, "still early")))
	clock.Advance(30 * time.Second)
	require.NoError(t, sendTo(b, group, "after a minute"))
	assert.Len(t, srv.ViolationsOfRetryAfter(), 1)
}

func TestFloodControlExtendPenalty(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	limits := telegramtest.DefaultFloodLimits()
	limits.ExtendPenalty = true
	srv := newFake(t, telegramtest.WithClock(clock.Now), telegramtest.WithFloodControl(limits))
	b := newBot(t, srv)
	for range 3 {
		require.NoError(t, sendTo(b, dm, "x"))
	}
	assert.Equal(t, 3, retryAfter(t, sendTo(b, dm, "x")))
	clock.Advance(2 * time.Second)
	assert.Equal(t, 3, retryAfter(t, sendTo(b, dm, "x")), "calling early restarts the penalty")
	clock.Advance(2 * time.Second) // past the first penalty, inside the extended one
	assert.Equal(t, 3, retryAfter(t, sendTo(b, dm, "x")))
	clock.Advance(3 * time.Second)
	require.NoError(t, sendTo(b, dm, "x"))
}

func TestFloodControlGlobalLimit(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	limits := telegramtest.DefaultFloodLimits()
	limits.Global = telegramtest.Rate{N: 5, Per: time.Second}
	srv := telegramtest.New(t, telegramtest.WithClock(clock.Now), telegramtest.WithFloodControl(limits))
	for i := range 6 {
		srv.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(1000 + i)})
	}
	b := newBot(t, srv)
	for i := range 5 {
		require.NoError(t, sendTo(b, telegramtest.ChatID(1000+i), "x"))
	}
	assert.Equal(t, 1, retryAfter(t, sendTo(b, 1005, "x")))
	clock.Advance(time.Second)
	require.NoError(t, sendTo(b, 1005, "x"))
}

func TestFloodControlOffByDefault(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)
	for i := range 30 {
		require.NoError(t, sendTo(b, dm, fmt.Sprint(i)))
	}
}

func TestFailNextAndFailWhen(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)

	srv.FailNext("sendMessage", 2, http.StatusBadGateway, "", 0)
	assert.ErrorContains(t, sendTo(b, dm, "1"), "502 Bad Gateway")
	_, err := b.SendChatAction(context.Background(), &bot.SendChatActionParams{ChatID: int64(dm), Action: "typing"})
	require.NoError(t, err, "faults are per method")
	assert.Error(t, sendTo(b, dm, "2"))
	require.NoError(t, sendTo(b, dm, "3"), "only n calls fail")

	stop := srv.FailWhen(func(c telegramtest.Call) bool { return c.Chat == group }, telegramtest.Fault{Code: 403, Description: "Forbidden: bot was kicked from the supergroup chat"})
	require.ErrorIs(t, sendTo(b, group, "x"), bot.ErrorForbidden)
	require.ErrorIs(t, sendTo(b, group, "y"), bot.ErrorForbidden)
	require.NoError(t, sendTo(b, dm, "z"))
	stop()
	require.NoError(t, sendTo(b, group, "back"))

	// An injected 429 counts for retry_after bookkeeping like a real one.
	srv.FailNext("sendMessage", 1, 429, "", 5)
	assert.Equal(t, 5, retryAfter(t, sendTo(b, dm, "a")))
	require.NoError(t, sendTo(b, dm, "too early"), "injected faults do not penalise by themselves")
	v := srv.ViolationsOfRetryAfter()
	require.Len(t, v, 1, "but a call inside the window is reported")
	assert.Equal(t, "too early", v[0].Call.Params["text"])
}

func TestTransportFaults(t *testing.T) {
	srv := newFake(t)
	b := newBot(t, srv)

	srv.DropConnection("sendMessage", 1)
	err := sendTo(b, dm, "dropped")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "error do request for method sendMessage")
	assert.False(t, errors.Is(err, bot.ErrorBadRequest))

	srv.FailNextWith("sendMessage", 1, telegramtest.Fault{Code: 502, Body: "<html>Bad Gateway</html>"})
	assert.ErrorContains(t, sendTo(b, dm, "html"), "error decode response body for method sendMessage")
	require.NoError(t, sendTo(b, dm, "fine"))

	calls := srv.CallsTo(dm)
	require.Len(t, calls, 3)
	assert.Equal(t, 0, calls[0].Status, "a dropped call has no status")
	assert.Equal(t, 502, calls[1].Status)
	assert.True(t, calls[2].OK())
	assert.Len(t, srv.Messages(dm), 1, "failed calls change nothing")
}

func TestDelayOutlastsClientTimeout(t *testing.T) {
	srv := newFake(t)
	srv.Delay("sendMessage", time.Minute)
	b, err := bot.New(srv.Token(), bot.WithServerURL(srv.URL()), bot.WithSkipGetMe(),
		bot.WithHTTPClient(2*time.Second, &http.Client{Timeout: 200 * time.Millisecond}))
	require.NoError(t, err)
	err = sendTo(b, dm, "slow")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Client.Timeout")
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool {
		c := s.CallsOf("sendMessage")
		return len(c) == 1 && c[0].Description == "client gone during injected delay"
	})
	assert.Empty(t, srv.Messages(dm), "the server gives up with the client")

	srv.Delay("sendMessage", 0)
	require.NoError(t, sendTo(b, dm, "fast"))
}

func TestPollerErrorsReachTheErrorsHandler(t *testing.T) {
	srv := newFake(t)
	srv.FailNext("getUpdates", 1, 401, "", 0)
	srv.FailNext("getUpdates", 1, 409, "", 0)
	errs := make(chan error, 8)
	got := make(collector, 4)
	b := newBot(t, srv, bot.WithErrorsHandler(func(err error) { errs <- err }), bot.WithDefaultHandler(got.handle))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	assert.ErrorIs(t, recv(t, errs), bot.ErrorUnauthorized)
	assert.ErrorIs(t, recv(t, errs), bot.ErrorConflict)
	srv.UserSends(dm, jane, "after recovery")
	assert.Equal(t, "after recovery", got.next(t).Message.Text)
}

func recv(t *testing.T, errs chan error) error {
	t.Helper()
	select {
	case err := <-errs:
		return err
	case <-time.After(waitLimit):
		t.Fatal("no error reached the errors handler")
		return nil
	}
}

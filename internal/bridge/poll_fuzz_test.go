package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/telegramtest"
)

// pollRig is a bridge polling the fake Bot API with no CLI behind it: the
// updates it gets come from a user who is not allowed, so nothing starts a
// turn, and the test sees the poll loop alone.
type pollRig struct {
	tg   *telegramtest.Server
	b    *bridge.Bridge
	logs *lockedBuffer
}

func newPollRig(t *testing.T) *pollRig {
	t.Helper()
	r := &pollRig{tg: telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot")), logs: &lockedBuffer{}}
	r.tg.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(mallory), Type: telegramtest.Private, FirstName: "Mallory"})
	dir := t.TempDir()
	store, err := state.Open(context.Background(), dir)
	require.NoError(t, err)
	c := config.Default()
	c.Telegram.BotToken = config.NewSecret(r.tg.Token())
	c.Telegram.APIURL = r.tg.URL()
	c.Telegram.AllowedUserIDs = []int64{int64(alice)}
	c.Telegram.PollTimeout = config.Duration(2 * time.Second)
	c.Claude.Binary = "/nonexistent/claude" // never started: nobody here is allowed
	c.State.Dir = dir
	ready := make(chan struct{})
	r.b, err = bridge.New(bridge.Options{
		Config: &c, Store: store, Pool: runner.NewPool(1, 1),
		Logger:     zerolog.New(r.logs).Level(zerolog.DebugLevel),
		InheritEnv: []string{"PATH=" + os.Getenv("PATH")},
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Ready:      func() { close(ready) },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(wait):
			t.Error("bridge did not stop")
		}
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		assert.NoError(t, r.b.Shutdown(sctx))
		assert.NoError(t, store.Close())
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("bridge stopped before it was ready: %v", err)
	case <-time.After(wait):
		t.Fatal("bridge never became ready")
	}
	return r
}

// handledLines counts the "update handled" debug lines per update id.
func (r *pollRig) handledLines() map[int64]int {
	out := map[int64]int{}
	for _, l := range logLinesOf(r.logs.String(), "update handled") {
		out[l.updateID()]++
	}
	return out
}

func logLinesOf(log, msg string) []logLine {
	var out []logLine
	for _, raw := range strings.Split(log, "\n") {
		var l logLine
		if json.Unmarshal([]byte(raw), &l) == nil && strings.HasPrefix(l.str("message"), msg) {
			out = append(out, l)
		}
	}
	return out
}

// FuzzPollLoopNeverStalls sends generated hostile batches (unions of unknown
// variants, wrong types, kinds nobody asked for, entries without an
// update_id) through the real poll loop: go-telegram/bot's poller behind
// the update guard. The property: polling never stalls (a normal update
// sent after the batch is handled and confirmed), every update is handled
// exactly once, each one carrying nothing to route is skipped with a log
// line naming it, and the daemon stays healthy. The seed corpus runs as a
// normal test.
func FuzzPollLoopNeverStalls(f *testing.F) {
	for _, s := range telegramtest.HostileSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newPollRig(t)
		batch := telegramtest.HostileBatch(data, int64(mallory), int64(mallory))
		kinds := map[telegramtest.UpdateID]string{}
		noID := 0
		for _, u := range batch {
			id := r.tg.InjectRaw(u.Kind, func(id telegramtest.UpdateID) json.RawMessage { return u.Build(int64(id)) })
			if u.NoID {
				noID++
				continue
			}
			kinds[id] = u.Kind
		}
		sentinel := r.tg.InjectRawUpdate("message", json.RawMessage(fmt.Sprintf(
			`{"message_id":1,"from":{"id":%d,"is_bot":false,"first_name":"M"},"chat":{"id":%d,"type":"private"},"date":1,"text":"sentinel"}`,
			mallory, mallory)))
		kinds[sentinel] = "message"

		// Never stalls: the update after the batch is handled and confirmed.
		// The worker handles in id order, so everything before it is done.
		require.Eventually(t, func() bool { return r.handledLines()[int64(sentinel)] > 0 }, wait, 5*time.Millisecond,
			"the update after the batch was never handled; log:\n%s", r.logs.String())
		r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return sn.ConfirmedOffset > sentinel })

		log := r.logs.String()
		handled := r.handledLines()
		skipped := map[int64]bool{}
		for _, l := range logLinesOf(log, "skipping an update") {
			skipped[l.updateID()] = true
		}
		for id, kind := range kinds {
			assert.Equal(t, 1, handled[int64(id)], "update %d (%s) handled exactly once", id, kind)
			if kind != "message" && kind != "callback_query" {
				assert.True(t, skipped[int64(id)], "update %d of kind %q skipped with a log line", id, kind)
			}
		}
		if noID > 0 {
			assert.NotEmpty(t, logLinesOf(log, "dropping getUpdates entries without a readable update_id"))
		}
		assert.NoError(t, r.b.Healthy(time.Now()), "skipping is progress")
		assert.Empty(t, r.b.PollTrouble(time.Now()))
	})
}

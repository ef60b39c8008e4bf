package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/service/metrics"
	"github.com/untether/untether/internal/telegramtest"
)

// probe GETs url and returns the status and body.
func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, b := fetch(t, url)
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	return resp.StatusCode, b
}

func fetch(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// pollLiveness is the update loop's half of (*bridge.Bridge).Healthy: the
// real loop guard, judged with a short staleness for the test.
type pollLiveness struct {
	loop  *ingress.Loop
	stale time.Duration
}

func (p pollLiveness) Healthy(now time.Time) error { return p.loop.Check(now, p.stale) }

// TestWedgedPoll runs the real update loop (go-telegram/bot long-polling
// the fake Bot API through ingress.Loop's transport): /healthz and /readyz
// are 503 before the first poll, 200 while polls complete, /healthz 503
// with the reason once getUpdates hangs, 200 again when it recovers;
// /readyz stays 200 through the wedge and is 503 from the drain on.
func TestWedgedPoll(t *testing.T) {
	tg := telegramtest.New(t)
	tg.Delay("getUpdates", time.Hour) // not polling yet
	var gate Gate
	loop := ingress.NewLoop(zerolog.Nop(), gate.MarkReady)
	client := &http.Client{Timeout: 4 * time.Second, Transport: loop.Transport(http.DefaultTransport)}
	b, err := bot.New(tg.Token(), bot.WithServerURL(tg.URL()), bot.WithHTTPClient(2*time.Second, client),
		bot.WithSkipGetMe(), bot.WithErrorsHandler(func(error) {}),
		bot.WithDefaultHandler(func(context.Context, *bot.Bot, *models.Update) {}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Healthz(pollLiveness{loop: loop, stale: 1500 * time.Millisecond}, nil, time.Now))
	mux.Handle("GET /readyz", Readyz(&gate))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	code, body := probe(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unhealthy: no getUpdates poll has completed yet\n", body)
	code, body = probe(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: no getUpdates call has succeeded yet\n", body)

	tg.Delay("getUpdates", 0) // the next poll goes through (after the held one times out)
	require.Eventually(t, func() bool { c, _ := probe(t, srv.URL+"/readyz"); return c == http.StatusOK }, 15*time.Second, 50*time.Millisecond,
		"ready once a poll was decoded")
	code, body = probe(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)

	tg.Delay("getUpdates", time.Hour) // wedged: the next poll hangs
	require.Eventually(t, func() bool { code, body = probe(t, srv.URL+"/healthz"); return code == http.StatusServiceUnavailable }, 15*time.Second, 50*time.Millisecond)
	assert.Regexp(t, `^unhealthy: no getUpdates poll finished since \S+\n$`, body)
	code, _ = probe(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusOK, code, "a wedge is liveness, not readiness")

	tg.Delay("getUpdates", 0)
	require.Eventually(t, func() bool { c, _ := probe(t, srv.URL+"/healthz"); return c == http.StatusOK }, 15*time.Second, 50*time.Millisecond,
		"healthy again once the held poll times out and the next one completes")

	gate.MarkDraining()
	code, body = probe(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: draining for a stop: running turns finish, no new work is taken\n", body)
	code, _ = probe(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusOK, code, "draining is not dying")
}

// alive is a daemon whose update loop makes progress: the poll half of
// liveness is TestWedgedPoll's subject, this test's is the disk.
type alive struct{}

func (alive) Healthy(time.Time) error { return nil }

// TestFullDisk: when the state database refuses writes (a full disk,
// injected into the real store as the bridge's fault tests do), /healthz
// stays 200 and names the trouble, because a restart would lose the writes
// kept in memory; /readyz is unaffected; the refused write is counted.
// Once the disk takes writes again the note goes away.
func TestFullDisk(t *testing.T) {
	ctx := context.Background()
	store, err := state.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	m := metrics.New(metrics.Build{}, zerolog.Nop())

	var conds Conditions
	var gate Gate
	gate.MarkReady()
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Healthz(alive{}, &conds, now))
	mux.Handle("GET /readyz", Readyz(&gate))
	mux.Handle("GET /metrics", m.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// What the state layer does with a refused write (durable.Writes keeps
	// it and retries): tell health and metrics.
	write := func() error {
		err := store.SetLastUpdateID(ctx, 42)
		if errors.Is(err, state.ErrStorage) {
			conds.Raise("state", err, now())
			m.StateWriteRefused("updates")
		}
		return err
	}

	store.InjectWriteFault(func() error { return state.ErrDiskFull })
	require.ErrorIs(t, write(), state.ErrDiskFull)
	clock = clock.Add(90 * time.Second)
	require.ErrorIs(t, write(), state.ErrDiskFull)

	code, body := probe(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\ndegraded: state: save last update id 42: state: the database could not be written: the disk is full (for 1m30s)\n", body)
	code, _ = probe(t, srv.URL+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	_, scraped := fetch(t, srv.URL+"/metrics")
	assert.Contains(t, scraped, `untether_state_writes_refused_total{kind="updates"} 2`)

	store.InjectWriteFault(nil)
	require.NoError(t, store.CheckWritable(ctx))
	conds.Clear("state")
	_, body = probe(t, srv.URL+"/healthz")
	assert.Equal(t, "ok\n", body)
}

// TestUnhealthyKeepsDegradations: both findings show, the failing one
// first, each on one line.
func TestUnhealthyKeepsDegradations(t *testing.T) {
	var conds Conditions
	at := time.Unix(1000, 0)
	conds.Raise("b", errors.New("second"), at)
	conds.Raise("a", errors.New("first\nwith a newline"), at)
	conds.Raise("a", errors.New("first again"), at.Add(time.Minute)) // keeps the first since
	h := Healthz(failing{errors.New("chat 5 has not handled\nits mailbox")}, &conds, func() time.Time { return at.Add(2 * time.Minute) })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "unhealthy: chat 5 has not handled its mailbox\ndegraded: a: first again (for 2m0s)\ndegraded: b: second (for 2m0s)\n", rec.Body.String())
}

type failing struct{ err error }

func (f failing) Healthy(time.Time) error { return f.err }

// secret is a Private error: the operator's text names a chat, the
// public one does not.
type secret struct{}

func (secret) Error() string  { return "chat 5 has not handled its mailbox" }
func (secret) Public() string { return "a chat has not handled its mailbox" }

// TestUnhealthyShowsOnlyThePublicReason: /healthz answers anyone who
// reaches the listener, so a Private error, wrapped or not, shows its
// public text and never its own.
func TestUnhealthyShowsOnlyThePublicReason(t *testing.T) {
	for _, err := range []error{secret{}, fmt.Errorf("chats: %w", secret{})} {
		h := Healthz(failing{err}, nil, time.Now)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, "unhealthy: a chat has not handled its mailbox\n", rec.Body.String())
	}
}

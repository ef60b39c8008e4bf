package service

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/service/httpd"
	"github.com/untether/untether/internal/service/metrics"
	"github.com/untether/untether/internal/service/webhook"
)

type alive struct{}

func (alive) Healthy(time.Time) error { return nil }

// queue stands in for the bridge's side of Fire; hold, when set, keeps
// Fire waiting until closed.
type queue struct {
	mu      sync.Mutex
	runs    []webhook.Run
	hold    chan struct{}
	entered chan struct{}
}

func (q *queue) Fire(ctx context.Context, r webhook.Run) error {
	if q.hold != nil {
		q.entered <- struct{}{}
		select {
		case <-q.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.runs = append(q.runs, r)
	return nil
}

const secret = "0123456789abcdef0123"

func start(t *testing.T, q *queue, gate *health.Gate, lim httpd.Options) (url string, m *metrics.Metrics) {
	t.Helper()
	m = metrics.New(metrics.Build{Version: "test"}, zerolog.Nop())
	s, err := New(Options{Listen: "127.0.0.1:0", Live: alive{}, Ready: gate, Metrics: m, Fire: q, Log: zerolog.Nop(), Limits: lim,
		Triggers: []config.Trigger{{Name: "ci", Secret: config.NewSecret(secret), ChatID: 1, Prompt: "run {{.n}}"}}})
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
	})
	return "http://" + s.Addr().String(), m
}

func do(t *testing.T, method, url string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func hook(t *testing.T, url string, n int) (int, string) {
	body := []byte(`{"n":` + strconv.Itoa(n) + `}`)
	return do(t, http.MethodPost, url+"/hooks/ci", body, map[string]string{
		"Content-Type": "application/json", webhook.SignatureHeader: webhook.Sign(secret, body)})
}

// TestRoutes: every endpoint answers on one listener, other methods and
// paths are refused, and the metrics count what happened.
func TestRoutes(t *testing.T) {
	q, gate := &queue{}, &health.Gate{}
	url, _ := start(t, q, gate, httpd.Options{})

	code, body := do(t, http.MethodGet, url+"/healthz", nil, nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	code, _ = do(t, http.MethodHead, url+"/healthz", nil, nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = do(t, http.MethodGet, url+"/readyz", nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	gate.MarkReady()
	code, _ = do(t, http.MethodGet, url+"/readyz", nil, nil)
	assert.Equal(t, http.StatusOK, code)

	code, body = hook(t, url, 7)
	assert.Equal(t, http.StatusAccepted, code, body)
	require.Len(t, q.runs, 1)
	assert.Equal(t, "run 7", q.runs[0].Prompt)

	code, _ = do(t, http.MethodGet, url+"/hooks/ci", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, _ = do(t, http.MethodPost, url+"/metrics", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, code)
	code, _ = do(t, http.MethodGet, url+"/", nil, nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = do(t, http.MethodPost, url+"/hooks/ci/extra", nil, nil)
	assert.Equal(t, http.StatusNotFound, code)

	code, scraped := do(t, http.MethodGet, url+"/metrics", nil, nil)
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`untether_http_requests_total{code="200",handler="healthz"} 2`,
		`untether_http_requests_total{code="503",handler="readyz"} 1`,
		`untether_http_requests_total{code="202",handler="hooks"} 1`,
		`untether_webhook_deliveries_total{result="accepted",trigger="ci"} 1`,
		`untether_build_info{`,
	} {
		assert.Contains(t, scraped, want)
	}
}

// TestBusy: with every handler slot taken, a request is refused 503 and
// counted as busy.
func TestBusy(t *testing.T) {
	q := &queue{hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	url, _ := start(t, q, &health.Gate{}, httpd.Options{MaxConcurrent: 1})
	done := make(chan int, 1)
	go func() {
		code, _ := hook(t, url, 1)
		done <- code
	}()
	<-q.entered
	code, _ := do(t, http.MethodGet, url+"/healthz", nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	close(q.hold)
	assert.Equal(t, http.StatusAccepted, <-done)

	_, scraped := do(t, http.MethodGet, url+"/metrics", nil, nil)
	assert.Contains(t, scraped, `untether_http_requests_total{code="503",handler="busy"} 1`)
}

func TestNewRefuses(t *testing.T) {
	m := metrics.New(metrics.Build{}, zerolog.Nop())
	good := Options{Listen: "127.0.0.1:0", Live: alive{}, Ready: &health.Gate{}, Metrics: m}
	_, err := New(good)
	assert.NoError(t, err, "no triggers, no Firer: fine")
	for name, edit := range map[string]func(*Options){
		"no address":         func(o *Options) { o.Listen = "" },
		"no liveness":        func(o *Options) { o.Live = nil },
		"no readiness":       func(o *Options) { o.Ready = nil },
		"no metrics":         func(o *Options) { o.Metrics = nil },
		"triggers, no Firer": func(o *Options) { o.Triggers = []config.Trigger{{Name: "x", Prompt: "y"}} },
		"bad prompt": func(o *Options) {
			o.Fire = &queue{}
			o.Triggers = []config.Trigger{{Name: "x", Prompt: "{{"}}
		},
	} {
		o := good
		edit(&o)
		_, err := New(o)
		assert.Error(t, err, name)
	}
}

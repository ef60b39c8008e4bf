package ingress

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type heard struct {
	mu    sync.Mutex
	calls []string
}

func (h *heard) BotAPICall(method string, code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, method+" "+strconv.Itoa(code))
}

// TestObserveCalls: every Bot API call through the loop's transport is
// heard with its method and status (0 without an answer); file downloads
// are not API calls; a decoded getUpdates sets the last poll success and
// stamps its updates' notes with the time it was read.
func TestObserveCalls(t *testing.T) {
	l := NewLoop(zerolog.Nop(), nil)
	h := &heard{}
	l.SetObserver(h)
	assert.True(t, l.LastPollSuccess().IsZero())
	next := roundTrip(func(r *http.Request) (*http.Response, error) {
		answer := func(code int, body string) (*http.Response, error) {
			return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}, Request: r}, nil
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/getUpdates"):
			return answer(200, `{"ok":true,"result":[{"update_id":7,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"text":"hi"}}]}`)
		case strings.HasSuffix(r.URL.Path, "/sendMessage"):
			return answer(429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 3","parameters":{"retry_after":3}}`)
		case strings.HasSuffix(r.URL.Path, "/editMessageText"):
			return nil, errors.New("connection reset")
		}
		return answer(200, "file bytes")
	})
	tr := l.Transport(next)
	do := func(path string) {
		req, err := http.NewRequest(http.MethodPost, "http://tg.example"+path, nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	before := time.Now()
	do("/bot123:abc/getUpdates")
	do("/prefix/bot123:abc/sendMessage")
	do("/bot123:abc/editMessageText")
	do("/file/bot123:abc/documents/file_1.pdf")
	do("/file/bot123:abc/photo.jpg")

	h.mu.Lock()
	assert.Equal(t, []string{"getUpdates 200", "sendMessage 429", "editMessageText 0"}, h.calls)
	h.mu.Unlock()
	assert.False(t, l.LastPollSuccess().Before(before))
	assert.True(t, l.LastPollSuccess().Equal(l.Take(7).Received()), "the note carries when its poll was read")
}

func TestAPIMethod(t *testing.T) {
	for path, want := range map[string]string{
		"/bot1:x/getMe":           "getMe",
		"/api/bot1:x/sendMessage": "sendMessage",
		"/file/bot1:x/a.jpg":      "",
		"/file/bot1:x/docs/a.pdf": "",
		"/getMe":                  "",
		"":                        "",
	} {
		got, ok := apiMethod(path)
		assert.Equal(t, want, got, path)
		assert.Equal(t, want != "", ok, path)
	}
}

package telegramtest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// waitLimit bounds every wait; it only matters when a test is failing.
const waitLimit = 10 * time.Second

const (
	dm    telegramtest.ChatID   = 111
	group telegramtest.ChatID   = -100200
	forum telegramtest.ChatID   = -100300
	topic telegramtest.ThreadID = 7
)

var jane = telegramtest.User{ID: 111, FirstName: "Jane", Username: "jane"}

// newFake starts a fake with a private chat, a supergroup and a forum.
func newFake(t *testing.T, opts ...telegramtest.Option) *telegramtest.Server {
	t.Helper()
	srv := telegramtest.New(t, opts...)
	srv.AddChat(telegramtest.Chat{ID: dm, Type: telegramtest.Private, FirstName: "Jane", Username: "jane"})
	srv.AddChat(telegramtest.Chat{ID: group, Type: telegramtest.Supergroup, Title: "Team"})
	srv.AddChat(telegramtest.Chat{ID: forum, Type: telegramtest.Supergroup, Title: "Forum", IsForum: true, Topics: []telegramtest.ThreadID{topic}})
	return srv
}

// newBot wires the real client to the fake the way the bridge will.
func newBot(t *testing.T, srv *telegramtest.Server, opts ...bot.Option) *bot.Bot {
	t.Helper()
	base := []bot.Option{
		bot.WithServerURL(srv.URL()),
		// The timeout only bounds a failure: a 10 MB multipart under -race
		// on a busy 2-core machine took over 5 s.
		bot.WithHTTPClient(2*time.Second, &http.Client{Timeout: 60 * time.Second}),
		bot.WithSkipGetMe(),
		bot.WithErrorsHandler(func(error) {}),
	}
	b, err := bot.New(srv.Token(), append(base, opts...)...)
	require.NoError(t, err)
	return b
}

// rawResponse is the envelope as JSON-agnostic maps, for shape assertions.
type rawResponse struct {
	Status int
	Body   map[string]any
	Text   []byte
}

// postJSON calls a method with an application/json body.
func postJSON(t *testing.T, srv *telegramtest.Server, method string, params map[string]any) rawResponse {
	t.Helper()
	body, err := json.Marshal(params)
	require.NoError(t, err)
	resp, err := http.Post(srv.URL()+"/bot"+srv.Token()+"/"+method, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	return readRaw(t, resp)
}

func readRaw(t *testing.T, resp *http.Response) rawResponse {
	t.Helper()
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err := buf.ReadFrom(resp.Body)
	require.NoError(t, err)
	out := rawResponse{Status: resp.StatusCode, Text: buf.Bytes()}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &out.Body), "body: %s", buf.Bytes())
	return out
}

func (r rawResponse) result(t *testing.T) any {
	t.Helper()
	require.Equal(t, true, r.Body["ok"], "response: %s", r.Text)
	return r.Body["result"]
}

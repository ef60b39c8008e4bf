package telegramtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// updateIDs extracts update_id values from a raw getUpdates result.
func updateIDs(t *testing.T, r rawResponse) []float64 {
	t.Helper()
	res, ok := r.result(t).([]any)
	require.True(t, ok, "result must be an array, got %s", r.Text)
	out := []float64{}
	for _, u := range res {
		out = append(out, u.(map[string]any)["update_id"].(float64))
	}
	return out
}

func TestGetUpdatesOffsetsAndLimits(t *testing.T) {
	srv := newFake(t)
	for _, text := range []string{"a", "b", "c", "d"} {
		srv.UserSends(dm, jane, text)
	}
	poll := func(params map[string]any) []float64 {
		return updateIDs(t, postJSON(t, srv, "getUpdates", params))
	}
	assert.Equal(t, []float64{100000, 100001, 100002, 100003}, poll(nil))
	assert.Equal(t, []float64{100000, 100001, 100002, 100003}, poll(nil), "unconfirmed updates are redelivered")
	assert.Equal(t, []float64{100000, 100001}, poll(map[string]any{"limit": 2}))
	assert.Equal(t, []float64{100001, 100002, 100003}, poll(map[string]any{"offset": 100001}), "offset confirms lower ids")
	assert.Equal(t, []float64{100001, 100002, 100003}, poll(map[string]any{"offset": 1}), "a lower offset cannot resurrect confirmed updates")
	assert.Equal(t, []float64{100003}, poll(map[string]any{"offset": -1}), "negative offset keeps the last N and forgets the rest")
	assert.Equal(t, []float64{100003}, poll(nil))
	assert.Equal(t, []float64{}, poll(map[string]any{"offset": 100004}))
	sn := srv.Snapshot()
	assert.Equal(t, telegramtest.UpdateID(100004), sn.ConfirmedOffset)
	assert.Empty(t, sn.Pending)
}

func TestAllowedUpdatesPersistAndFilterAtCreation(t *testing.T) {
	srv := newFake(t)
	prompt := postJSON(t, srv, "sendMessage", map[string]any{"chat_id": dm, "text": "pick", "reply_markup": map[string]any{
		"inline_keyboard": [][]map[string]any{{{"text": "A", "callback_data": "a"}}}}})
	msgID := telegramtest.MessageID(prompt.result(t).(map[string]any)["message_id"].(float64))

	assert.Equal(t, []float64{}, updateIDs(t, postJSON(t, srv, "getUpdates", map[string]any{"allowed_updates": []string{"callback_query"}})))
	srv.UserSends(dm, jane, "ignored")
	srv.UserPresses(dm, msgID, "a")
	got := postJSON(t, srv, "getUpdates", nil) // no allowed_updates: the setting persists
	res := got.result(t).([]any)
	require.Len(t, res, 1)
	assert.Contains(t, res[0], "callback_query")

	postJSON(t, srv, "getUpdates", map[string]any{"offset": 100001, "allowed_updates": []string{}}) // [] restores the default
	srv.UserSends(dm, jane, "seen")
	assert.Equal(t, []float64{100001}, updateIDs(t, postJSON(t, srv, "getUpdates", nil)))
}

func TestLongPollBlocksUntilAnUpdateArrives(t *testing.T) {
	srv := newFake(t)
	done := make(chan rawResponse, 1)
	go func() { done <- postJSONNoAssert(srv, "getUpdates", `{"timeout":30}`) }()
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool {
		c := s.CallsOf("getUpdates")
		return len(c) == 1 && c[0].Status == 0
	})
	select {
	case r := <-done:
		t.Fatalf("long poll returned before any update: %s", r.Text)
	default:
	}
	srv.UserSends(dm, jane, "wake up")
	r := <-done
	assert.Equal(t, []float64{100000}, updateIDs(t, r))
}

func TestLongPollTimeoutReturnsEmpty(t *testing.T) {
	srv := newFake(t)
	r := postJSON(t, srv, "getUpdates", map[string]any{"timeout": 1})
	assert.Equal(t, []float64{}, updateIDs(t, r))
	assert.Equal(t, `{"ok":true,"result":[]}`, string(r.Text), "an empty poll is [], not null")
}

func TestSecondPollerTerminatesTheFirst(t *testing.T) {
	srv := newFake(t)
	done := make(chan rawResponse, 1)
	go func() { done <- postJSONNoAssert(srv, "getUpdates", `{"timeout":30}`) }()
	// Wait until the first poll is registered as waiting, not just logged:
	// a second poll arriving before that would be the earlier one.
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool {
		c := s.CallsOf("getUpdates")
		return len(c) == 1 && c[0].Status == 0 && s.LongPolling
	})
	second := postJSON(t, srv, "getUpdates", map[string]any{"timeout": 0})
	assert.Equal(t, 200, second.Status)
	first := <-done
	assert.Equal(t, 409, first.Status)
	assert.JSONEq(t, `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}`, string(first.Text))
}

func TestWebhookBlocksGetUpdates(t *testing.T) {
	srv := newFake(t)
	srv.UserSends(dm, jane, "pending")
	postJSON(t, srv, "setWebhook", map[string]any{"url": "https://example.invalid/hook"})
	r := postJSON(t, srv, "getUpdates", nil)
	assert.Equal(t, 409, r.Status)
	assert.Contains(t, r.Body["description"], "can't use getUpdates method while webhook is active")
	info := postJSON(t, srv, "getWebhookInfo", nil).result(t).(map[string]any)
	assert.Equal(t, "https://example.invalid/hook", info["url"])
	assert.Equal(t, float64(1), info["pending_update_count"])

	postJSON(t, srv, "deleteWebhook", map[string]any{"drop_pending_updates": true})
	assert.Equal(t, []float64{}, updateIDs(t, postJSON(t, srv, "getUpdates", nil)), "drop_pending_updates discards the queue")
}

func TestCloseUnblocksLongPoll(t *testing.T) {
	srv := newFake(t)
	done := make(chan rawResponse, 1)
	go func() { done <- postJSONNoAssert(srv, "getUpdates", `{"timeout":50}`) }()
	srv.WaitFor(waitLimit, func(s *telegramtest.Snapshot) bool { return len(s.CallsOf("getUpdates")) == 1 })
	srv.Close()
	r := <-done
	assert.Equal(t, 200, r.Status)
	srv.Close() // idempotent
}

// postJSONNoAssert is postJSON for goroutines other than the test's.
func postJSONNoAssert(srv *telegramtest.Server, method, body string) rawResponse {
	resp, err := http.Post(srv.URL()+"/bot"+srv.Token()+"/"+method, "application/json", strings.NewReader(body))
	if err != nil {
		return rawResponse{Text: []byte(err.Error())}
	}
	defer resp.Body.Close()
	var buf strings.Builder
	_, _ = io.Copy(&buf, resp.Body)
	out := rawResponse{Status: resp.StatusCode, Text: []byte(buf.String())}
	_ = json.Unmarshal(out.Text, &out.Body)
	return out
}

func TestParameterEncodings(t *testing.T) {
	srv := newFake(t)
	base := srv.URL() + "/bot" + srv.Token()

	resp, err := http.PostForm(base+"/sendMessage", url.Values{"chat_id": {"111"}, "text": {"<b>form</b>"}, "parse_mode": {"HTML"},
		"reply_markup": {`{"inline_keyboard":[[{"text":"A","callback_data":"a"}]]}`}})
	require.NoError(t, err)
	r := readRaw(t, resp)
	require.Equal(t, 200, r.Status, "%s", r.Text)

	resp, err = http.Get(base + "/sendMessage?chat_id=111&text=query")
	require.NoError(t, err)
	require.Equal(t, 200, readRaw(t, resp).Status)

	resp, err = http.Get(base + "/GETME") // method names are case-insensitive
	require.NoError(t, err)
	require.Equal(t, 200, readRaw(t, resp).Status)

	msgs := srv.Messages(dm)
	require.Len(t, msgs, 2)
	assert.Equal(t, "form", msgs[0].Text)
	assert.Equal(t, []telegramtest.Entity{{Type: "bold", Length: 4}}, msgs[0].Entities)
	assert.Equal(t, [][]telegramtest.Button{{{Text: "A", CallbackData: "a"}}}, msgs[0].Keyboard)
	assert.Equal(t, "query", msgs[1].Text)

	calls := srv.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, telegramtest.ChatID(111), calls[0].Chat)
	assert.Equal(t, "HTML", calls[0].Params["parse_mode"])
	assert.JSONEq(t, `{"inline_keyboard":[[{"text":"A","callback_data":"a"}]]}`, calls[0].Params["reply_markup"])
}

func TestTokenAndPathChecks(t *testing.T) {
	srv := newFake(t)
	resp, err := http.Get(srv.URL() + "/bot123456:nope/getMe")
	require.NoError(t, err)
	r := readRaw(t, resp)
	assert.Equal(t, 401, r.Status)
	assert.JSONEq(t, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, string(r.Text))

	resp, err = http.Get(srv.URL() + "/elsewhere")
	require.NoError(t, err)
	assert.Equal(t, 404, readRaw(t, resp).Status)
}

package telegramtest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// fixture is one request/response pair in testdata/, written by hand from the
// Bot API object reference, not captured from the fake.
type fixture struct {
	Doc      string          `json:"doc"`
	Method   string          `json:"method"`
	Params   map[string]any  `json:"params"`
	Status   int             `json:"status"`
	Response json.RawMessage `json:"response"`
}

// volatile keys differ between the docs' examples and any one run; only
// their JSON type is compared. file_size depends on an image encoder's
// output; the contract tests check sizes exactly.
var volatile = map[string]bool{
	"date": true, "edit_date": true, "file_id": true, "file_unique_id": true, "chat_instance": true,
	"file_size": true,
}

// TestResponsesMatchDocFixtures replays the fixtures in order against one
// fake and compares every response structurally: same keys at every level,
// same JSON types, equal values except for volatile keys. Each response is
// also decoded with go-telegram/bot's models, so a fixture cannot drift away
// from what the real client accepts either.
func TestResponsesMatchDocFixtures(t *testing.T) {
	clock := telegramtest.NewManualClock(time.Time{})
	srv := newFake(t, telegramtest.WithClock(clock.Now))
	setup := map[string]func(){
		"03_getUpdates.json": func() {
			srv.UserSends(dm, jane, "/start")
			srv.UserPresses(dm, 1, "ap:1")
		},
		"05_editMessageText.json": func() { clock.Advance(time.Second) },
		"11_sendMessage_flood.json": func() {
			srv.EnableFloodControl(telegramtest.DefaultFloodLimits())
			for range 3 {
				postJSON(t, srv, "sendMessage", map[string]any{"chat_id": dm, "text": "burst"}).result(t)
			}
		},
		"12_getWebhookInfo.json": func() {
			srv.DisableFloodControl()
			postJSON(t, srv, "getUpdates", map[string]any{"offset": 100002}).result(t) // confirm 03's updates
		},
		"15_getUpdates_photo.json": func() { srv.UserSendsPhoto(dm, jane, testPNG(t, 200, 100), "/ask what is this?") },
	}
	decodeAs := map[string]func() any{
		"getMe": func() any { return &models.User{} }, "sendMessage": func() any { return &models.Message{} },
		"editMessageText": func() any { return &models.Message{} }, "sendDocument": func() any { return &models.Message{} },
		"getUpdates": func() any { return &[]models.Update{} }, "getMyCommands": func() any { return &[]models.BotCommand{} },
		"getWebhookInfo": func() any { return &models.WebhookInfo{} }, "getFile": func() any { return &models.File{} },
	}

	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, path := range files {
		name := filepath.Base(path)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var fx fixture
		require.NoError(t, json.Unmarshal(raw, &fx), name)
		if f := setup[name]; f != nil {
			f()
		}
		got := postJSON(t, srv, fx.Method, fx.Params)
		ok := t.Run(name, func(t *testing.T) {
			assert.Equal(t, fx.Status, got.Status)
			var want any
			require.NoError(t, json.Unmarshal(fx.Response, &want))
			var have any
			require.NoError(t, json.Unmarshal(got.Text, &have))
			for _, diff := range shapeDiff("$", want, have) {
				t.Error(diff)
			}
			if newDst, ok := decodeAs[fx.Method]; ok && fx.Status == 200 {
				for label, body := range map[string][]byte{"fixture": fx.Response, "fake": got.Text} {
					var env struct{ Result json.RawMessage }
					require.NoError(t, json.Unmarshal(body, &env))
					require.NoError(t, json.Unmarshal(env.Result, newDst()), "%s result must decode with go-telegram/bot models", label)
				}
			}
		})
		require.True(t, ok, "later fixtures depend on %s", name)
	}
}

// shapeDiff lists structural differences between want and have.
func shapeDiff(path string, want, have any) []string {
	if reflect.TypeOf(want) != reflect.TypeOf(have) {
		return []string{fmt.Sprintf("%s: want %T %v, got %T %v", path, want, want, have, have)}
	}
	var out []string
	switch w := want.(type) {
	case map[string]any:
		h := have.(map[string]any)
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			if volatile[k] {
				if reflect.TypeOf(wv) != reflect.TypeOf(hv) {
					out = append(out, fmt.Sprintf("%s.%s: want %T, got %T", path, k, wv, hv))
				}
				continue
			}
			out = append(out, shapeDiff(path+"."+k, wv, hv)...)
		}
		for k := range h {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: unexpected key (value %v)", path, k, h[k]))
			}
		}
	case []any:
		h := have.([]any)
		if len(w) != len(h) {
			return []string{fmt.Sprintf("%s: want %d elements, got %d", path, len(w), len(h))}
		}
		for i := range w {
			out = append(out, shapeDiff(fmt.Sprintf("%s[%d]", path, i), w[i], h[i])...)
		}
	default:
		if want != have {
			out = append(out, fmt.Sprintf("%s: want %v, got %v", path, want, have))
		}
	}
	return out
}

func TestShapeDiffCatchesDrift(t *testing.T) {
	want := map[string]any{"a": 1.0, "date": 5.0, "list": []any{"x"}}
	assert.Empty(t, shapeDiff("$", want, map[string]any{"a": 1.0, "date": 9.0, "list": []any{"x"}}))
	assert.Len(t, shapeDiff("$", want, map[string]any{"a": 2.0, "date": "9", "list": []any{"x", "y"}, "extra": true}), 4)
}

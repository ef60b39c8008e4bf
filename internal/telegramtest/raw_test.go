package telegramtest_test

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// pollRaw returns the raw entries of one getUpdates result.
func pollRaw(t *testing.T, srv *telegramtest.Server, params map[string]any) []json.RawMessage {
	t.Helper()
	r := postJSON(t, srv, "getUpdates", params)
	var env struct {
		OK     bool              `json:"ok"`
		Result []json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(r.Text, &env), "%s", r.Text)
	require.True(t, env.OK, "%s", r.Text)
	return env.Result
}

func TestInjectRawUpdateIsSentVerbatim(t *testing.T) {
	srv := newFake(t)
	// allowed_updates names only messages; a raw update ignores it.
	assert.Empty(t, pollRaw(t, srv, map[string]any{"allowed_updates": []string{"message"}}))
	payload := `{"chat":{"id":111,"type":"private"},"weird":[1,{"x":null}]}`
	id := srv.InjectRawUpdate("guest_message", json.RawMessage(payload))
	srv.UserSends(dm, jane, "after")

	got := pollRaw(t, srv, nil)
	require.Len(t, got, 2)
	assert.JSONEq(t, `{"update_id":`+itoa(id)+`,"guest_message":`+payload+`}`, string(got[0]))
	assert.Contains(t, string(got[1]), `"text":"after"`)
	sn := srv.Snapshot()
	require.Len(t, sn.Pending, 2)
	assert.Equal(t, "guest_message", sn.Pending[0].Kind)
	assert.Equal(t, id, sn.Pending[0].ID)

	// Confirmed by offset like any other update.
	assert.Len(t, pollRaw(t, srv, map[string]any{"offset": int64(id) + 1}), 1)
	assert.Equal(t, id+1, srv.Snapshot().ConfirmedOffset)
}

func TestInjectRawEntryWithoutUpdateID(t *testing.T) {
	srv := newFake(t)
	id := srv.InjectRaw("broken", func(telegramtest.UpdateID) json.RawMessage { return json.RawMessage(`{"message":{"text":"no id"}}`) })
	nullID := srv.InjectRaw("null", func(telegramtest.UpdateID) json.RawMessage { return json.RawMessage(`null`) })
	assert.Equal(t, id+1, nullID)
	got := pollRaw(t, srv, nil)
	require.Len(t, got, 2)
	assert.JSONEq(t, `{"message":{"text":"no id"}}`, string(got[0]))
	assert.Equal(t, "null", string(got[1]))
	// Nobody can name them by id, but an offset past the fake's ids drops them.
	assert.Empty(t, pollRaw(t, srv, map[string]any{"offset": int64(nullID) + 1}))
}

func TestWithRawFieldsMergesIntoARealMessage(t *testing.T) {
	srv := newFake(t)
	origin := json.RawMessage(`{"type":"story_author","date":1700000000}`)
	m := srv.UserSends(dm, jane, "look at this", telegramtest.WithRawFields(map[string]json.RawMessage{"forward_origin": origin}))
	got := pollRaw(t, srv, nil)
	require.Len(t, got, 1)
	var u struct {
		UpdateID int64                      `json:"update_id"`
		Message  map[string]json.RawMessage `json:"message"`
	}
	require.NoError(t, json.Unmarshal(got[0], &u))
	assert.Equal(t, int64(srv.Snapshot().Pending[0].ID), u.UpdateID)
	assert.JSONEq(t, string(origin), string(u.Message["forward_origin"]))
	assert.JSONEq(t, `"look at this"`, string(u.Message["text"]))
	assert.JSONEq(t, itoa(telegramtest.UpdateID(m.ID)), string(u.Message["message_id"]))
	stored, ok := srv.Message(dm, m.ID)
	require.True(t, ok, "the message is in the chat like any other")
	assert.Equal(t, "look at this", stored.Text)

	// The reason this exists: go-telegram/bot v1.19.0 cannot decode such an
	// update, and fails the whole batch with it (upstream #90).
	var updates []*models.Update
	err := json.Unmarshal([]byte("["+string(got[0])+"]"), &updates)
	assert.ErrorContains(t, err, "unsupported MessageOrigin type")
}

func TestRawInjectionRejectsInvalidJSON(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	srv := telegramtest.New(rec)
	srv.AddChat(telegramtest.Chat{ID: dm})
	assert.Contains(t, rec.fatalOf(func() { srv.InjectRawUpdate("message", json.RawMessage(`{"text":`)) }), "not valid JSON",
		"an invalid payload would break the whole response")
	assert.Contains(t, rec.fatalOf(func() {
		srv.UserSends(dm, jane, "hi", telegramtest.WithRawFields(map[string]json.RawMessage{"text": json.RawMessage(`[`)}))
	}), "not valid JSON")
	assert.Empty(t, srv.Snapshot().Pending)
}

func itoa(id telegramtest.UpdateID) string {
	b, _ := json.Marshal(id)
	return string(b)
}

func TestSnapshotKeepsEveryUpdate(t *testing.T) {
	srv := newFake(t)
	m := srv.UserSends(dm, jane, "one")
	raw := srv.InjectRawUpdate("guest_message", json.RawMessage(`{}`))
	first := srv.Snapshot().UpdateOf(dm, m.ID)
	require.NotZero(t, first)
	assert.Len(t, pollRaw(t, srv, map[string]any{"offset": int64(raw) + 1}), 0)
	sn := srv.Snapshot()
	assert.Empty(t, sn.Pending, "all confirmed")
	require.Len(t, sn.Updates, 2, "confirmed updates stay in the history")
	assert.Equal(t, first, sn.UpdateOf(dm, m.ID))
	assert.Equal(t, raw, sn.Updates[1].ID)
	assert.Equal(t, "guest_message", sn.Updates[1].Kind)
	assert.Zero(t, sn.UpdateOf(dm, m.ID+1))
}

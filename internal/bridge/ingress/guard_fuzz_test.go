package ingress

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// FuzzGuardUpdates: whatever unions of unknown variants, wrong types and
// unconfirmable entries a batch holds, the guard hands the library a body
// it decodes, with every readable update exactly once and in id order, and
// the user's content still in it.
func FuzzGuardUpdates(f *testing.F) {
	for _, s := range telegramtest.HostileSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		batch := telegramtest.HostileBatch(data, 1001, 1001)
		var entries []string
		var ids []int64
		byID := map[int64]telegramtest.HostileUpdate{}
		for i, u := range batch {
			id := int64(500 + i)
			entries = append(entries, string(u.Build(id)))
			if !u.NoID {
				ids = append(ids, id)
				byID[id] = u
			}
		}
		if len(data) > 0 && data[len(data)-1]&1 == 1 {
			slices.Reverse(entries) // the guard restores id order
		}
		g, err := guardUpdates(batchOf(entries...))
		if len(ids) == 0 {
			require.True(t, errors.Is(err, ErrUndecodableBatch), "a batch of unconfirmable entries is an error: %v", err)
			return
		}
		require.NoError(t, err)
		got, err := libraryDecode(g.body)
		require.NoError(t, err, "the library decodes what the guard hands on: %s", g.body)
		var gotIDs []int64
		for _, u := range got {
			require.NotNil(t, u)
			gotIDs = append(gotIDs, u.ID)
		}
		assert.Equal(t, ids, gotIDs, "every readable update, once, in id order")
		assert.Len(t, g.unreadable, len(batch)-len(ids))
		assert.Equal(t, ids[len(ids)-1], g.maxID)
		for _, u := range got {
			want, note := byID[u.ID], g.notes[u.ID]
			switch want.Kind {
			case "message":
				require.NotNil(t, u.Message, "the message survives: %s (%v)", entries, note.repairs)
				if want.Want != "" {
					assert.Contains(t, []string{u.Message.Text, u.Message.Caption}, want.Want, "the user's text survives")
				}
				// The bridge keeps note.Raw across a crash; decoded again, it
				// is the very message the library handed on.
				var kept models.Update
				require.NoError(t, json.Unmarshal(note.Raw(), &kept), "the bridge can keep the message across a crash")
				assert.Equal(t, u.Message, kept.Message, "a kept message comes back as it came")
			case "callback_query":
				if u.CallbackQuery == nil {
					require.True(t, want.MaySkip, "the press survives: %s (%v)", entries, note.repairs)
					require.NotNil(t, note.repairs, "a skipped press is logged with what could not be read")
					break
				}
				assert.Equal(t, want.Want, u.CallbackQuery.Data)
			default:
				assert.Equal(t, want.Kind, note.kind, "the log can name the kind")
			}
			assert.NoError(t, note.skipErr, "the repairer recovers every generated update")
		}
	})
}

// FuzzGuardRawBody feeds arbitrary bytes as a getUpdates body: the guard
// never panics, and whatever it accepts the library decodes.
func FuzzGuardRawBody(f *testing.F) {
	f.Add([]byte(`{"ok":true,"result":[]}`))
	f.Add([]byte(`{"ok":true,"result":[null,{"update_id":3,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"forward_origin":{"type":"x"}}}]}`))
	f.Add([]byte(`{"ok":true,"result":[{"update_id":2,"callback_query":{"id":"q","from":{"id":1},"message":{"date":"x"}}},{"update_id":1}]}`))
	f.Add([]byte(`{"ok":false,"error_code":502,"description":"Bad Gateway"}`))
	f.Add([]byte(`<html>`))
	for _, s := range telegramtest.HostileSeeds()[:8] {
		var entries []string
		for i, u := range telegramtest.HostileBatch(s, 1, 1) {
			entries = append(entries, string(u.Build(int64(i))))
		}
		f.Add(batchOf(entries...))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		g, err := guardUpdates(body)
		if err != nil || g.passed {
			return
		}
		got, err := libraryDecode(g.body)
		require.NoError(t, err, "the library decodes what the guard hands on: %q", g.body)
		assert.Len(t, got, g.count)
		assert.True(t, idsSorted(got), "in id order, so the library's offset covers the batch")
	})
}

func idsSorted(us []*models.Update) bool {
	for i := 1; i < len(us); i++ {
		if us[i-1].ID > us[i].ID {
			return false
		}
	}
	return true
}

package ingress

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libraryDecode decodes a getUpdates body exactly as go-telegram/bot v1.19.0
// does (raw_request.go: the envelope, then the result into the poller's
// []*models.Update).
func libraryDecode(body []byte) ([]*models.Update, error) {
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result,omitempty"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("decode envelope: %w", err)
	}
	var updates []*models.Update
	if err := json.Unmarshal(env.Result, &updates); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	return updates, nil
}

func batchOf(updates ...string) []byte {
	return []byte(`{"ok":true,"result":[` + strings.Join(updates, ",") + `]}`)
}

const (
	testUser = `{"id":1001,"is_bot":false,"first_name":"Alice"}`
	testChat = `{"id":1001,"type":"private","first_name":"Alice"}`
)

// msgUpdate is a message update from Alice in her private chat, with extra
// members appended to the message object.
func msgUpdate(id int, extra string) string {
	m := `"message_id":5,"from":` + testUser + `,"chat":` + testChat + `,"date":1700000000`
	if extra != "" {
		m += "," + extra
	}
	return fmt.Sprintf(`{"update_id":%d,"message":{%s}}`, id, m)
}

// guardOne runs a single update through the guard and the library's decoder.
func guardOne(t *testing.T, raw string) (*models.Update, Note) {
	t.Helper()
	g, err := guardUpdates(batchOf(raw))
	require.NoError(t, err)
	got, err := libraryDecode(g.body)
	require.NoError(t, err, "the library decodes what the guard hands on")
	require.Len(t, got, 1)
	id, ok := updateIDOf([]byte(raw))
	require.True(t, ok)
	require.Equal(t, id, got[0].ID)
	if got[0].Message != nil {
		_, err = json.Marshal(models.Update{ID: got[0].ID, Message: got[0].Message})
		assert.NoError(t, err, "the bridge can marshal the message to keep it across a crash")
	}
	return got[0], g.notes[id]
}

func repairedPaths(n Note) []string {
	var out []string
	for _, r := range n.repairs {
		out = append(out, r.Action+" "+r.Path)
	}
	return out
}

// TestGuardUnknownUnionVariants gives every union an update can carry a
// variant the library does not know. Each case first proves the library
// alone fails the whole batch (the poller would ask for it forever), then
// that the guarded update decodes and keeps the user's content.
func TestGuardUnknownUnionVariants(t *testing.T) {
	const origin = `{"type":"story_author","date":1699999999,"author":{"id":7}}`
	cases := []struct {
		name  string
		raw   string
		check func(t *testing.T, u *models.Update, n Note)
	}{{
		name: "MessageOrigin in forward_origin",
		raw:  msgUpdate(1, `"text":"look at this","forward_origin":`+origin),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message)
			assert.Equal(t, "look at this", u.Message.Text)
			require.NotNil(t, u.Message.ForwardOrigin, "still marked as forwarded")
			assert.Equal(t, models.MessageOriginTypeHiddenUser, u.Message.ForwardOrigin.Type)
			assert.Equal(t, 1699999999, u.Message.ForwardOrigin.MessageOriginHiddenUser.Date, "the date survives")
			assert.Empty(t, u.Message.ForwardOrigin.MessageOriginHiddenUser.SenderUserName, "no invented sender")
			assert.Equal(t, []string{"replaced message.forward_origin"}, repairedPaths(n))
			assert.Contains(t, n.repairs[0].Err, "unsupported MessageOrigin type")
		},
	}, {
		name: "MessageOrigin in external_reply.origin",
		raw:  msgUpdate(2, `"text":"replying","external_reply":{"origin":`+origin+`,"message_id":9}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Equal(t, "replying", u.Message.Text)
			require.NotNil(t, u.Message.ExternalReply)
			assert.Equal(t, 9, u.Message.ExternalReply.MessageID)
			assert.Equal(t, models.MessageOriginTypeHiddenUser, u.Message.ExternalReply.Origin.Type)
			assert.Equal(t, []string{"replaced message.external_reply.origin"}, repairedPaths(n))
		},
	}, {
		name: "MessageOrigin of a known type with a broken sender",
		raw:  msgUpdate(3, `"text":"fwd","forward_origin":{"type":"user","date":1,"sender_user":"alice"}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Equal(t, "fwd", u.Message.Text)
			require.NotNil(t, u.Message.ForwardOrigin)
			assert.Equal(t, models.MessageOriginTypeUser, u.Message.ForwardOrigin.Type, "the known variant is kept")
			assert.Equal(t, []string{"dropped message.forward_origin.sender_user"}, repairedPaths(n))
		},
	}, {
		name: "PaidMedia in paid_media",
		raw: msgUpdate(4, `"caption":"paid pics","paid_media":{"star_count":5,"paid_media":[`+
			`{"type":"preview","width":10},{"type":"hologram","depth":3},{"type":"photo","photo":[]}]}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Equal(t, "paid pics", u.Message.Caption)
			require.NotNil(t, u.Message.PaidMedia)
			assert.Equal(t, 5, u.Message.PaidMedia.StarCount)
			require.Len(t, u.Message.PaidMedia.PaidMedia, 2, "the known items stay")
			assert.Equal(t, models.PaidMediaTypePreview, u.Message.PaidMedia.PaidMedia[0].Type)
			assert.Equal(t, models.PaidMediaTypePhoto, u.Message.PaidMedia.PaidMedia[1].Type)
			assert.Equal(t, []string{"dropped message.paid_media.paid_media[1]"}, repairedPaths(n))
		},
	}, {
		name: "PaidMedia in external_reply.paid_media",
		raw: msgUpdate(5, `"text":"about that","external_reply":{"origin":{"type":"hidden_user","date":1,"sender_user_name":"X"},`+
			`"paid_media":{"star_count":1,"paid_media":[{"type":"hologram"}]}}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Equal(t, "about that", u.Message.Text)
			require.NotNil(t, u.Message.ExternalReply)
			assert.Equal(t, "X", u.Message.ExternalReply.Origin.MessageOriginHiddenUser.SenderUserName)
			assert.Empty(t, u.Message.ExternalReply.PaidMedia.PaidMedia)
		},
	}, {
		name: "BackgroundType in chat_background_set",
		raw:  msgUpdate(6, `"chat_background_set":{"type":{"type":"animated_scene","scene":"rain"}}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message, "the service message still arrives")
			assert.Equal(t, 5, u.Message.ID)
			assert.Nil(t, u.Message.ChatBackgroundSet, "a background of unknown type cannot be kept half-read")
			assert.Equal(t, []string{"dropped message.chat_background_set"}, repairedPaths(n))
		},
	}, {
		name: "BackgroundFill inside a fill background",
		raw:  msgUpdate(7, `"chat_background_set":{"type":{"type":"fill","fill":{"type":"plasma"},"dark_theme_dimming":10}}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message)
			assert.Nil(t, u.Message.ChatBackgroundSet)
			assert.Contains(t, n.repairs[0].Err, "unsupported BackgroundFill type")
		},
	}, {
		name: "BackgroundFill inside a pattern background",
		raw:  msgUpdate(8, `"chat_background_set":{"type":{"type":"pattern","fill":{"type":"plasma"},"intensity":3,"document":{"file_id":"f","file_unique_id":"u"}}}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message)
			assert.Nil(t, u.Message.ChatBackgroundSet)
		},
	}, {
		name: "MaybeInaccessibleMessage in pinned_message holding a poison",
		raw:  msgUpdate(9, `"pinned_message":{"message_id":3,"chat":`+testChat+`,"date":1700000000,"text":"pinned text","forward_origin":`+origin+`}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message.PinnedMessage)
			require.NotNil(t, u.Message.PinnedMessage.Message, "the pinned message is repaired, not dropped")
			assert.Equal(t, "pinned text", u.Message.PinnedMessage.Message.Text)
			assert.Equal(t, []string{"replaced message.pinned_message.forward_origin"}, repairedPaths(n))
		},
	}, {
		name: "MaybeInaccessibleMessage in pinned_message with an unreadable date",
		raw:  msgUpdate(10, `"pinned_message":{"message_id":3,"chat":`+testChat+`,"date":"yesterday"}`),
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.Message)
			assert.Nil(t, u.Message.PinnedMessage)
			assert.Equal(t, []string{"dropped message.pinned_message"}, repairedPaths(n))
		},
	}, {
		name: "MaybeInaccessibleMessage in callback_query.message holding a poison",
		raw: `{"update_id":11,"callback_query":{"id":"q1","from":` + testUser + `,"chat_instance":"ci","data":"a:tok",` +
			`"message":{"message_id":3,"chat":` + testChat + `,"date":1700000000,"text":"approve?","forward_origin":` + origin + `}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.CallbackQuery)
			assert.Equal(t, "a:tok", u.CallbackQuery.Data, "the press survives")
			assert.Equal(t, int64(1001), u.CallbackQuery.From.ID)
			require.NotNil(t, u.CallbackQuery.Message.Message)
			assert.Equal(t, "approve?", u.CallbackQuery.Message.Message.Text)
			assert.Equal(t, "callback_query", n.kind)
		},
	}, {
		name: "MaybeInaccessibleMessage in callback_query.message that cannot be read",
		raw: `{"update_id":12,"callback_query":{"id":"q2","from":` + testUser + `,"chat_instance":"ci","data":"c:tok",` +
			`"message":{"message_id":3,"chat":` + testChat + `,"date":[1]}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Nil(t, u.CallbackQuery, "a press from a chat nobody can read is skipped, not refused as a stranger's")
			assert.Equal(t, []string{"dropped callback_query"}, repairedPaths(n))
		},
	}, {
		name: "ReactionType in message_reaction",
		raw: `{"update_id":13,"message_reaction":{"chat":` + testChat + `,"message_id":3,"date":1,` +
			`"old_reaction":[{"type":"emoji","emoji":"👍"}],"new_reaction":[{"type":"sticker_reaction","id":"x"},{"type":"paid"}]}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.MessageReaction)
			assert.Len(t, u.MessageReaction.OldReaction, 1)
			require.Len(t, u.MessageReaction.NewReaction, 1)
			assert.Equal(t, models.ReactionTypeTypePaid, u.MessageReaction.NewReaction[0].Type)
			assert.Equal(t, "message_reaction", n.kind)
			assert.Equal(t, []string{"dropped message_reaction.new_reaction[0]"}, repairedPaths(n))
		},
	}, {
		name: "ReactionType in message_reaction_count",
		raw: `{"update_id":14,"message_reaction_count":{"chat":` + testChat + `,"message_id":3,"date":1,` +
			`"reactions":[{"type":{"type":"sticker_reaction"},"total_count":2},{"type":{"type":"emoji","emoji":"🔥"},"total_count":1}]}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			require.NotNil(t, u.MessageReactionCount)
			require.Len(t, u.MessageReactionCount.Reactions, 1)
			assert.Equal(t, 1, u.MessageReactionCount.Reactions[0].TotalCount)
			assert.Equal(t, []string{"dropped message_reaction_count.reactions[0]"}, repairedPaths(n))
		},
	}, {
		name: "ChatMember in my_chat_member",
		raw: `{"update_id":15,"my_chat_member":{"chat":` + testChat + `,"from":` + testUser + `,"date":1,` +
			`"old_chat_member":{"status":"member","user":` + testUser + `},"new_chat_member":{"status":"ghost","user":` + testUser + `}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Nil(t, u.MyChatMember, "a member change of unknown status cannot be kept half-read")
			assert.Equal(t, "my_chat_member", n.kind)
			assert.Equal(t, []string{"dropped my_chat_member"}, repairedPaths(n))
		},
	}, {
		name: "ChatMember in chat_member",
		raw: `{"update_id":16,"chat_member":{"chat":` + testChat + `,"from":` + testUser + `,"date":1,` +
			`"old_chat_member":{"status":"ghost","user":` + testUser + `},"new_chat_member":{"status":"left","user":` + testUser + `}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Nil(t, u.ChatMember)
			assert.Equal(t, []string{"dropped chat_member"}, repairedPaths(n))
		},
	}, {
		name: "ChatBoostSource in chat_boost",
		raw: `{"update_id":17,"chat_boost":{"chat":` + testChat + `,"boost":{"boost_id":"b","add_date":1,"expiration_date":2,` +
			`"source":{"source":"stars_purchase","user":` + testUser + `}}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Nil(t, u.ChatBoost, "a boost whose source cannot be read cannot be kept half-read")
			assert.Equal(t, []string{"dropped chat_boost"}, repairedPaths(n))
		},
	}, {
		name: "ChatBoostSource in removed_chat_boost",
		raw: `{"update_id":18,"removed_chat_boost":{"chat":` + testChat + `,"boost_id":"b","remove_date":1,` +
			`"source":{"source":"stars_purchase"}}}`,
		check: func(t *testing.T, u *models.Update, n Note) {
			assert.Nil(t, u.RemovedChatBoost)
			assert.Equal(t, []string{"dropped removed_chat_boost"}, repairedPaths(n))
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := libraryDecode(batchOf(tc.raw, msgUpdate(99, `"text":"next"`)))
			require.Error(t, err, "the library alone fails the whole batch")
			u, note := guardOne(t, tc.raw)
			require.NotNil(t, note.repairs, "the note says the update was repaired")
			require.NoError(t, note.skipErr)
			tc.check(t, u, note)
		})
	}
}

// TestGuardUnionsOutsideUpdates covers the union types that v1.19.0 uses only
// in method results: should a later version put one in an update, the
// repairer already drops the unknown variant and keeps the rest.
func TestGuardUnionsOutsideUpdates(t *testing.T) {
	cases := []struct {
		name string
		typ  any
		raw  string
		want []string
	}{
		{"OwnedGift", models.OwnedGifts{}, `{"total_count":2,"gifts":[{"type":"regular","send_date":1,"gift":{"id":"g"}},{"type":"collectible","send_date":2}]}`,
			[]string{"dropped gifts[1]"}},
		{"StoryAreaType", []models.StoryArea{}, `[{"position":{"x_percentage":1},"type":{"type":"poll"}},{"position":{},"type":{"type":"link","url":"https://x"}}]`,
			[]string{"dropped [0].type"}}, // StoryAreaType's zero value marshals: the area stays
		{"TransactionPartner", models.StarTransactions{}, `{"transactions":[{"id":"t","amount":1,"date":1,"source":{"type":"bank"}}]}`,
			[]string{"dropped transactions[0].source"}},
		{"RevenueWithdrawalState", models.StarTransactions{}, `{"transactions":[{"id":"t","amount":1,"date":1,"receiver":{"type":"fragment","withdrawal_state":{"type":"frozen"}}}]}`,
			[]string{"dropped transactions[0].receiver.withdrawal_state"}},
		{"MenuButton", []models.MenuButton{}, `[{"type":"mini_app"},{"type":"commands"}]`,
			[]string{"dropped [0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := reflect.TypeOf(tc.typ)
			require.Error(t, decodeInto([]byte(tc.raw), typ), "the library refuses the unknown variant")
			r := &repairer{}
			out, ok, _ := r.fix([]byte(tc.raw), typ, "", 0)
			require.True(t, ok)
			assert.NoError(t, decodeInto(out, typ))
			var got []string
			for _, rp := range r.repairs {
				got = append(got, rp.Action+" "+rp.Path)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestGuardTypeMismatches covers values of the wrong JSON type: the repairer
// is driven by the Go types, not by a list of unions, so these recover too.
func TestGuardTypeMismatches(t *testing.T) {
	t.Run("a non-string text is dropped, the message kept", func(t *testing.T) {
		u, n := guardOne(t, msgUpdate(1, `"text":42,"caption":"still here"`))
		require.NotNil(t, u.Message)
		assert.Empty(t, u.Message.Text)
		assert.Equal(t, "still here", u.Message.Caption)
		assert.Equal(t, []string{"dropped message.text"}, repairedPaths(n))
	})
	t.Run("a broken entity is dropped, the text and the other entities kept", func(t *testing.T) {
		u, n := guardOne(t, msgUpdate(2, `"text":"/new please","entities":[{"type":"bot_command","offset":0,"length":4},{"type":"bold","offset":"5","length":6}]`))
		assert.Equal(t, "/new please", u.Message.Text)
		require.Len(t, u.Message.Entities, 1)
		assert.Equal(t, models.MessageEntityTypeBotCommand, u.Message.Entities[0].Type)
		assert.Equal(t, []string{"dropped message.entities[1]"}, repairedPaths(n))
	})
	t.Run("a float date is dropped", func(t *testing.T) {
		u, _ := guardOne(t, `{"update_id":3,"message":{"message_id":5,"from":`+testUser+`,"chat":`+testChat+`,"date":1.5,"text":"hi"}}`)
		assert.Equal(t, "hi", u.Message.Text)
	})
	t.Run("an unreadable sender leaves a message nobody is allowed to send", func(t *testing.T) {
		u, n := guardOne(t, `{"update_id":4,"message":{"message_id":5,"from":{"id":"1001"},"chat":`+testChat+`,"date":1,"text":"hi"}}`)
		require.NotNil(t, u.Message)
		assert.Nil(t, u.Message.From, "never a zero user id that could pass an allow-list")
		assert.Equal(t, []string{"dropped message.from"}, repairedPaths(n))
	})
	t.Run("an unreadable message id loses the message: the update is skipped", func(t *testing.T) {
		u, n := guardOne(t, `{"update_id":5,"message":{"message_id":"five","from":`+testUser+`,"chat":`+testChat+`,"date":1,"text":"hi"}}`)
		assert.Nil(t, u.Message, "never routed with message id 0")
		assert.Equal(t, "message", n.kind)
		assert.Equal(t, []string{"dropped message"}, repairedPaths(n))
	})
	t.Run("an unreadable chat id loses the message", func(t *testing.T) {
		u, _ := guardOne(t, `{"update_id":6,"message":{"message_id":5,"from":`+testUser+`,"chat":{"id":"x","type":"private"},"date":1,"text":"hi"}}`)
		assert.Nil(t, u.Message, "never routed to chat 0")
	})
	t.Run("a callback query without a readable sender is dropped", func(t *testing.T) {
		u, _ := guardOne(t, `{"update_id":7,"callback_query":{"id":"q","from":{"id":[]},"chat_instance":"c","data":"a:t"}}`)
		assert.Nil(t, u.CallbackQuery, "never a press from user 0")
	})
	t.Run("an update that is nothing but a broken update_id and a kind", func(t *testing.T) {
		u, n := guardOne(t, `{"update_id":8,"message":"hello"}`)
		assert.Nil(t, u.Message)
		assert.Equal(t, []string{"dropped message"}, repairedPaths(n))
	})
}

func TestGuardBatch(t *testing.T) {
	poison := msgUpdate(11, `"text":"forwarded","forward_origin":{"type":"new_kind"}`)
	good := msgUpdate(12, `"text":"hello"`)
	t.Run("good updates pass byte for byte around a repaired one", func(t *testing.T) {
		g, err := guardUpdates(batchOf(msgUpdate(10, `"text":"first"`), poison, good))
		require.NoError(t, err)
		assert.Contains(t, string(g.body), msgUpdate(10, `"text":"first"`))
		assert.Contains(t, string(g.body), good)
		got, err := libraryDecode(g.body)
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.Equal(t, []string{"first", "forwarded", "hello"}, []string{got[0].Message.Text, got[1].Message.Text, got[2].Message.Text})
		assert.Equal(t, 3, g.count)
		assert.Equal(t, int64(12), g.maxID)
		require.Len(t, g.notes, 3, "every message's note carries it as the library decodes it")
		assert.Equal(t, msgUpdate(10, `"text":"first"`), string(g.notes[10].Raw()), "kept byte for byte")
		assert.Equal(t, good, string(g.notes[12].Raw()))
		assert.NotNil(t, g.notes[11].repairs, "the repaired one says so")
		got11, err := libraryDecode(batchOf(string(g.notes[11].Raw())))
		require.NoError(t, err)
		assert.Equal(t, "forwarded", got11[0].Message.Text, "and keeps what it handed on")
	})
	t.Run("updates are handed on in id order so the offset covers them all", func(t *testing.T) {
		g, err := guardUpdates(batchOf(good, msgUpdate(10, `"text":"first"`)))
		require.NoError(t, err)
		got, err := libraryDecode(g.body)
		require.NoError(t, err)
		assert.Equal(t, int64(10), got[0].ID)
		assert.Equal(t, int64(12), got[1].ID)
	})
	t.Run("entries without an update_id are dropped, the rest handed on", func(t *testing.T) {
		g, err := guardUpdates(batchOf(`null`, `7`, `{"message":{}}`, `{"update_id":"12"}`, good))
		require.NoError(t, err)
		got, err := libraryDecode(g.body)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, int64(12), got[0].ID)
		assert.Len(t, g.unreadable, 4)
	})
	t.Run("an update of no kind the library knows passes, noted", func(t *testing.T) {
		g, err := guardUpdates(batchOf(`{"update_id":20,"guest_message":{"text":"hi"}}`))
		require.NoError(t, err)
		assert.Equal(t, Note{kind: "guest_message"}, g.notes[20])
	})
	t.Run("an update the repairer gives up on becomes its bare id", func(t *testing.T) {
		defer func(d int) { repairDepthLimit = d }(repairDepthLimit)
		repairDepthLimit = -1 // the repairer refuses everything
		g, err := guardUpdates(batchOf(poison, good))
		require.NoError(t, err)
		got, err := libraryDecode(g.body)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, &models.Update{ID: 11}, got[0], "the library still sees the id and confirms it")
		assert.Equal(t, "hello", got[1].Message.Text)
		assert.ErrorContains(t, g.notes[11].skipErr, "unsupported MessageOrigin type")
		assert.Equal(t, "message", g.notes[11].kind)
	})
	for name, body := range map[string]string{
		"not JSON":                          `<html>502</html>`,
		"a result that is not a list":       `{"ok":true,"result":{"update_id":1}}`,
		"only entries without an update_id": `{"ok":true,"result":[null,{"message":{}}]}`,
	} {
		t.Run("unreadable: "+name, func(t *testing.T) {
			_, err := guardUpdates([]byte(body))
			assert.True(t, errors.Is(err, ErrUndecodableBatch), "%v", err)
		})
	}
	t.Run("an error envelope passes untouched for the library to report", func(t *testing.T) {
		body := `{"ok":false,"error_code":409,"description":"Conflict"}`
		g, err := guardUpdates([]byte(body))
		require.NoError(t, err)
		assert.True(t, g.passed)
		assert.Equal(t, body, string(g.body))
	})
	t.Run("an empty or null result is an empty poll", func(t *testing.T) {
		for _, body := range []string{`{"ok":true,"result":[]}`, `{"ok":true,"result":null}`, `{"ok":true}`} {
			g, err := guardUpdates([]byte(body))
			require.NoError(t, err, body)
			got, err := libraryDecode(g.body)
			require.NoError(t, err, body)
			assert.Empty(t, got)
		}
	})
}

func TestGuardKeepsMessagesEncodable(t *testing.T) {
	// Decodes (the fill is simply absent) but the library cannot encode it
	// again, and the bridge stores every message it routes.
	raw := `{"update_id":1,"x_first":true,"message":{"message_id":5,"chat":` + testChat + `,"date":1,"text":"hi","chat_background_set":{"type":{"type":"fill"}}}}`
	var u models.Update
	require.NoError(t, json.Unmarshal([]byte(raw), &u))
	_, err := json.Marshal(u)
	require.Error(t, err, "the library cannot encode what it decoded")
	got, note := guardOne(t, raw)
	assert.Equal(t, "message", note.kind, "named by the kind it carries, not its first member")
	assert.Equal(t, "hi", got.Message.Text)
	assert.Nil(t, got.Message.ChatBackgroundSet)
	assert.Equal(t, []string{"dropped message.chat_background_set"}, repairedPaths(note))
}

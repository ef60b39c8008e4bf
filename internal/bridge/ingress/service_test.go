package ingress

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServiceMessagesAreRecognised: what Telegram writes about a chat is
// named by the guard from the raw update, those the library cannot decode
// (video chats under their current names) included; what a person sent,
// usable or not, is not a service message.
func TestServiceMessagesAreRecognised(t *testing.T) {
	cases := []struct {
		name, member, want string
	}{
		{"pin", `"pinned_message":{"message_id":3,"chat":` + testChat + `,"date":1,"text":"x"}`, "pinned_message"},
		{"join", `"new_chat_members":[` + testUser + `]`, "new_chat_members"},
		{"leave", `"left_chat_member":` + testUser, "left_chat_member"},
		{"title", `"new_chat_title":"renamed"`, "new_chat_title"},
		{"photo removed", `"delete_chat_photo":true`, "delete_chat_photo"},
		{"topic created", `"forum_topic_created":{"name":"t","icon_color":1}`, "forum_topic_created"},
		{"topic closed", `"forum_topic_closed":{}`, "forum_topic_closed"},
		{"video chat started (undecoded by the library)", `"video_chat_started":{}`, "video_chat_started"},
		{"video chat ended (undecoded by the library)", `"video_chat_ended":{"duration":5}`, "video_chat_ended"},
		{"giveaway completed", `"giveaway_completed":{"winner_count":1}`, "giveaway_completed"},
		{"auto-delete timer", `"message_auto_delete_timer_changed":{"message_auto_delete_time":86400}`, "message_auto_delete_timer_changed"},
		{"text", `"text":"hello"`, ""},
		{"sticker", `"sticker":{"file_id":"s","file_unique_id":"u","type":"regular","width":1,"height":1,"is_animated":false,"is_video":false}`, ""},
		{"location", `"location":{"latitude":1,"longitude":2}`, ""},
		{"a false flag is no service", `"delete_chat_photo":false,"text":"hi"`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := fmt.Sprintf(`{"update_id":7,"message":{"message_id":9,"from":%s,"chat":%s,"date":1,%s}}`, testUser, testChat, c.member)
			g, err := guardUpdates(batchOf(raw))
			require.NoError(t, err)
			assert.Equal(t, c.want, g.notes[7].Service())
			updates, err := libraryDecode(g.body)
			require.NoError(t, err)
			require.Len(t, updates, 1)
			if c.want != "" && !strings.HasPrefix(c.want, "video_chat") {
				assert.Equal(t, c.want, ServiceOf(updates[0].Message), "the decoded message tells it too")
			}
			if c.want == "" {
				assert.Empty(t, ServiceOf(updates[0].Message))
			}
		})
	}
}

// TestServiceOfCoversEveryServiceFieldTheLibraryDecodes sets each member of
// models.Message that serviceFields lists, alone, and expects ServiceOf to
// name it; and no other member of Message makes a service message. A new
// library version with a new service member fails here until it is listed.
func TestServiceOfCoversEveryServiceFieldTheLibraryDecodes(t *testing.T) {
	mt := reflect.TypeOf(models.Message{})
	seen := map[string]bool{}
	for i := range mt.NumField() {
		f := mt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		var m models.Message
		v := reflect.ValueOf(&m).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		default:
			continue
		}
		if serviceFields[name] {
			seen[name] = true
			assert.Equal(t, name, ServiceOf(&m), "Message.%s", f.Name)
		} else {
			assert.Empty(t, ServiceOf(&m), "Message.%s is not a service member", f.Name)
		}
	}
	for name := range serviceFields {
		if !seen[name] && !strings.HasPrefix(name, "video_chat_") {
			t.Errorf("%s is listed as a service member but models.Message has no such field", name)
		}
	}
}

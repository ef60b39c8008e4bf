package bridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// Service messages are not people (issue 24 §3): a pin in a private chat,
// and in a group with group_trigger = "all" members joining and leaving, a
// new title, a topic opened and closed, a video chat (which go-telegram/bot
// cannot decode), a giveaway's end and the auto-delete timer get no reply
// and never reach Claude. A sticker, which a person sent, is still answered
// "not supported".
func TestServiceMessagesGetNoReply(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	u := telegramtest.User{ID: alice, FirstName: "U"}
	raw := func(fields string) telegramtest.UserOption {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte("{"+fields+"}"), &m); err != nil {
			t.Fatal(err)
		}
		return telegramtest.WithRawFields(m)
	}
	person := fmt.Sprintf(`{"id":%d,"is_bot":false,"first_name":"U"}`, alice)

	first := r.say(chat, alice, "before the pin")
	r.finalAnswer(chat, first.ID, "echo: before the pin")
	calls := len(r.claude.API.ModelCalls())

	var service []telegramtest.Message
	service = append(service, r.tg.UserSends(chat, u, "", raw(fmt.Sprintf(
		`"pinned_message":{"message_id":%d,"chat":{"id":%d,"type":"private"},"date":1,"text":"before the pin"}`, first.ID, alice))))
	for _, f := range []string{
		`"new_chat_members":[` + person + `]`,
		`"left_chat_member":` + person,
		`"new_chat_title":"team, renamed"`,
		`"forum_topic_created":{"name":"ideas","icon_color":7322096}`,
		`"forum_topic_closed":{}`,
		`"video_chat_started":{}`,
		`"video_chat_ended":{"duration":60}`,
		`"giveaway_completed":{"winner_count":1}`,
		`"message_auto_delete_timer_changed":{"message_auto_delete_time":86400}`,
	} {
		service = append(service, r.tg.UserSends(team, u, "", raw(f)))
	}
	sticker := r.tg.UserSends(chat, u, "", raw(
		`"sticker":{"file_id":"st","file_unique_id":"stu","type":"regular","width":512,"height":512,"is_animated":false,"is_video":false}`))
	r.waitBot(chat, "the sticker's answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == sticker.ID && strings.Contains(m.Text, "this kind of message is not supported")
	})

	// Handled in order: once these are answered, every service message
	// before them has been seen.
	after := r.say(chat, alice, "after the pin")
	r.finalAnswer(chat, after.ID, "echo: after the pin")
	inTeam := r.say(team, alice, "after the storm of notices")
	r.finalAnswer(team, inTeam.ID, "echo: after the storm of notices")

	snap := r.tg.Snapshot()
	for i, s := range service {
		where := team
		if i == 0 {
			where = chat // the pin
		}
		for _, m := range snap.BotMessages(where) {
			assert.NotEqual(t, s.ID, m.ReplyTo, "a reply to the service message %d in %d: %q", s.ID, where, m.Text)
		}
	}
	for _, where := range []telegramtest.ChatID{chat, team} {
		n := 0
		for _, m := range snap.BotMessages(where) {
			if strings.Contains(m.Text, "not supported") {
				n++
			}
		}
		want := map[telegramtest.ChatID]int{chat: 1, team: 0}[where]
		assert.Equal(t, want, n, "\"not supported\" answers in %d: only the sticker's", where)
	}
	assert.Equal(t, calls+2, len(r.claude.API.ModelCalls()), "only the two texts reached Claude")
}

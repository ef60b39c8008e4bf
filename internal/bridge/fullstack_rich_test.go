package bridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// Content the library leaves without text (issue 24 §3), through the fake
// Bot API and the real CLI: a rich message (Bot API 10.1, which
// go-telegram/bot v1.19 does not decode) passes on its text, and says
// plainly what it could not pass on; one that holds nothing readable, or
// comes in a form nobody knows, is answered so and never reaches Claude;
// a checklist, and a reply to one of its tasks, pass on their text.
func TestRichMessagesAndChecklistsPassOnTheirText(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	u := telegramtest.User{ID: alice, FirstName: "U"}
	raw := func(fields string) telegramtest.UserOption {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte("{"+fields+"}"), &m))
		return telegramtest.WithRawFields(m)
	}
	sent := func(what string, opt telegramtest.UserOption) (telegramtest.Message, telegramtest.Message) {
		in := r.tg.UserSends(chat, u, "", opt)
		return in, r.waitBot(chat, what, func(m telegramtest.Message) bool { return m.ReplyTo == in.ID })
	}

	in, note := sent("the note on the photo", raw(`"rich_message":{"blocks":[
		{"type":"heading","size":1,"text":"Release plan"},
		{"type":"list","items":[{"label":"1.","blocks":[{"type":"paragraph","text":["Tag ",{"type":"code","text":"v2"}]}]}]},
		{"type":"photo","photo":[{"file_id":"p","file_unique_id":"pu","width":1,"height":1}],"caption":{"text":"the chart"}}]}`))
	assert.Equal(t, "ℹ️ Claude gets the text of this message, but untether could not pass on a photo.", note.Text)
	r.finalAnswer(chat, in.ID, "Release plan")
	assert.Contains(t, r.prompts(), "# Release plan\n1. Tag `v2`\n[a photo that untether could not pass on]\nthe chart",
		"the text went to Claude, with the photo named")

	calls := len(r.claude.API.ModelCalls())
	_, refusal := sent("the media-only message's answer", raw(`"rich_message":{"blocks":[{"type":"video","video":{}}]}`))
	assert.Equal(t, "⚠️ untether cannot read this message: it holds only a video, so it did not go to Claude. Send it as text, a photo or a file.",
		refusal.Text)
	for _, hostile := range []string{`"rich_message":5`, `"rich_message":{"blocks":"no"}`, `"rich_message":[{"type":"paragraph"}]`} {
		_, refusal = sent("the answer to "+hostile, raw(hostile))
		assert.Contains(t, refusal.Text, "it holds only a rich message in a form untether does not know", hostile)
	}
	assert.Equal(t, calls, len(r.claude.API.ModelCalls()), "nothing unreadable reached Claude")

	list := fmt.Sprintf(`{"message_id":900,"from":{"id":%d,"is_bot":false,"first_name":"U"},"chat":{"id":%d,"type":"private"},"date":1,
		"checklist":{"title":"Groceries","tasks":[{"id":1,"text":"milk"},{"id":2,"text":"eggs","completion_date":5}]}}`, alice, alice)
	in = r.tg.UserSends(chat, u, "", raw(`"checklist":{"title":"Groceries","tasks":[{"id":1,"text":"milk"}]}`))
	r.finalAnswer(chat, in.ID, "Checklist: Groceries")
	assert.Contains(t, r.prompts(), "Checklist: Groceries\n- [ ] milk")
	in = r.tg.UserSends(chat, u, "bought them", raw(`"reply_to_checklist_task_id":2,"reply_to_message":`+list))
	r.finalAnswer(chat, in.ID, "bought them")
	var got string
	for _, p := range r.prompts() {
		if strings.HasSuffix(p, "bought them") {
			got = p
		}
	}
	assert.Equal(t, "[The user is replying to this part of their own earlier message: “eggs”]\n\nbought them", got)
}

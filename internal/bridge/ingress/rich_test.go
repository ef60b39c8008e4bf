package ingress

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rich messages in the Bot API 10.1 shapes (core.telegram.org/bots/api#richmessage).
func TestRichTextReadsTheDocumentedBlocks(t *testing.T) {
	tests := []struct {
		name, blocks string
		want         string
		unread       []string
	}{
		{"paragraphs and spans", `[{"type":"paragraph","text":["Deploy ",{"type":"bold","text":"now"},", see ",
			{"type":"url","text":"the docs","url":"https://example.com/d"},{"type":"custom_emoji","custom_emoji_id":"1","alternative_text":"🚀"}]},
			{"type":"paragraph","text":{"type":"code","text":"make all"}}]`,
			"Deploy now, see the docs (https://example.com/d)🚀\n`make all`", nil},
		{"headings, code, math, divider, footer", `[{"type":"heading","size":2,"text":"Plan"},{"type":"pre","language":"go","text":"x := 1"},
			{"type":"mathematical_expression","expression":"e^{i\\pi}"},{"type":"divider"},{"type":"footer","text":"end"},{"type":"anchor","name":"a"}]`,
			"## Plan\n```go\nx := 1\n```\n$$e^{i\\pi}$$\n---\nend", nil},
		{"lists with checkboxes and nesting", `[{"type":"list","items":[
			{"label":"1.","blocks":[{"type":"paragraph","text":"first"}]},
			{"label":"•","has_checkbox":true,"is_checked":true,"blocks":[{"type":"paragraph","text":"done"},
				{"type":"list","items":[{"label":"-","blocks":[{"type":"paragraph","text":"inner"}]}]}]}]}]`,
			"1. first\n• [x] done\n  - inner", nil},
		{"quotes and details", `[{"type":"blockquote","blocks":[{"type":"paragraph","text":"to be"}],"credit":"W. S."},
			{"type":"pullquote","text":"or not"},{"type":"details","summary":"More","blocks":[{"type":"paragraph","text":"hidden"}]}]`,
			"> to be\n— W. S.\n> or not\n▸ More\n  hidden", nil},
		{"a table", `[{"type":"table","cells":[[{"text":"a","is_header":true},{"text":"b"}],[{"text":["1"]},{}]],"caption":"T"}]`,
			"| a | b |\n| 1 |  |\nT", nil},
		{"media is named, with its caption", `[{"type":"paragraph","text":"look"},{"type":"photo","photo":[{"file_id":"x"}],
			"caption":{"text":"the cat","credit":"me"}},{"type":"collage","blocks":[{"type":"video","video":{}}]}]`,
			"look\n[a photo that untether could not pass on]\nthe cat\n— me\n[a video that untether could not pass on]", []string{"a photo", "a video"}},
		{"a map is text", `[{"type":"map","location":{"latitude":48.8584,"longitude":2.2945},"zoom":15}]`,
			"[a map of 48.85840, 2.29450]", nil},
		{"a block newer than this code", `[{"type":"poll_block","text":"vote?","blocks":[{"type":"paragraph","text":"yes"}]}]`,
			"vote?\nyes\n[a part of kind \"poll_block\" that untether cannot read]", []string{`a part of kind "poll_block"`}},
		{"a span newer than this code keeps its text", `[{"type":"paragraph","text":{"type":"sparkle","text":"shiny"}}]`, "shiny", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, unread, ok := richText(json.RawMessage(`{"blocks":` + tt.blocks + `}`))
			require.True(t, ok)
			assert.Equal(t, tt.want, text)
			assert.Equal(t, tt.unread, unread)
		})
	}
}

// Hostile or unknown shapes never panic, never loop, and are named.
func TestRichTextSurvivesHostileShapes(t *testing.T) {
	for _, raw := range []string{``, `null`, `"text"`, `[]`, `{}`, `{"blocks":{}}`, `{"blocks":"x"}`} {
		_, _, ok := richText(json.RawMessage(raw))
		assert.False(t, ok, raw)
	}
	for _, blocks := range []string{
		`[null, 1, "x", [], {"type":5}, {"type":"paragraph","text":{"type":"bold","text":{"type":"italic","text":7}}}]`,
		`[{"type":"list","items":[null,{"blocks":"x"},{"label":"` + strings.Repeat("L", 100) + `","blocks":[{"type":"paragraph","text":"ok"}]}]}]`,
		`[{"type":"table","cells":"x"},{"type":"table","cells":[["x"]]},{"type":"heading","size":"big","text":"h"}]`,
		`[{"type":"pre","language":"a\nb <b>","text":"c"}]`,
	} {
		text, _, ok := richText(json.RawMessage(`{"blocks":` + blocks + `}`))
		assert.True(t, ok, blocks)
		assert.True(t, utf8.ValidString(text))
	}
	deep := strings.Repeat(`{"type":"blockquote","blocks":[`, 200) + `{"type":"paragraph","text":"bottom"}` + strings.Repeat(`]}`, 200)
	_, unread, ok := richText(json.RawMessage(`{"blocks":[` + deep + `]}`))
	assert.True(t, ok)
	assert.Contains(t, unread, "blocks nested deeper than untether reads")
	deepText := strings.Repeat(`[`, 500) + `"x"` + strings.Repeat(`]`, 500)
	_, unread, _ = richText(json.RawMessage(`{"blocks":[{"type":"paragraph","text":` + deepText + `}]}`))
	assert.Contains(t, unread, "text nested deeper than untether reads")
	long := fmt.Sprintf(`{"blocks":[%s]}`, strings.TrimSuffix(strings.Repeat(`{"type":"paragraph","text":"`+strings.Repeat("w", 1000)+`"},`, 100), ","))
	text, unread, _ := richText(json.RawMessage(long))
	assert.LessOrEqual(t, utf8.RuneCountInString(text), richMaxRunes)
	assert.Contains(t, unread, "the rest of a very long message")
}

func FuzzRichText(f *testing.F) {
	f.Add(`{"blocks":[{"type":"paragraph","text":["a",{"type":"bold","text":"b"}]}]}`)
	f.Add(`{"blocks":[{"type":"list","items":[{"label":"1.","blocks":[{"type":"table","cells":[[{"text":"x"}]]}]}]}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		text, _, _ := richText(json.RawMessage(raw))
		if utf8.ValidString(raw) && !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8 out of valid input %q", raw)
		}
		if utf8.RuneCountInString(text) > richMaxRunes {
			t.Fatalf("text over the bound: %d runes", utf8.RuneCountInString(text))
		}
	})
}

func TestReadableFillsWhatTheLibraryLeftWithoutText(t *testing.T) {
	update := func(msg string) []byte { return []byte(`{"update_id":1,"message":` + msg + `}`) }
	decode := func(raw []byte) *models.Message {
		var u models.Update
		require.NoError(t, json.Unmarshal(raw, &u))
		return u.Message
	}
	t.Run("a rich message", func(t *testing.T) {
		raw := update(`{"message_id":5,"chat":{"id":1,"type":"private"},"date":1,
			"rich_message":{"blocks":[{"type":"paragraph","text":"hello"},{"type":"photo","photo":[]}]}}`)
		m := decode(raw)
		require.Empty(t, m.Text, "the library drops rich_message")
		rd := ReadableOf(m, raw)
		assert.Equal(t, "hello\n[a photo that untether could not pass on]", rd.Msg.Text)
		assert.Equal(t, []string{"a photo"}, rd.Unread)
		assert.False(t, rd.Unreadable)
		assert.Empty(t, m.Text, "the library's message is left alone")
	})
	t.Run("a rich message of media only", func(t *testing.T) {
		raw := update(`{"message_id":5,"chat":{"id":1,"type":"private"},"date":1,"rich_message":{"blocks":[{"type":"video"}]}}`)
		rd := ReadableOf(decode(raw), raw)
		assert.True(t, rd.Unreadable)
		assert.Equal(t, []string{"a video"}, rd.Unread)
	})
	t.Run("a rich message in a form nobody knows", func(t *testing.T) {
		raw := update(`{"message_id":5,"chat":{"id":1,"type":"private"},"date":1,"rich_message":"surprise"}`)
		rd := ReadableOf(decode(raw), raw)
		assert.True(t, rd.Unreadable)
		assert.Equal(t, []string{"a rich message in a form untether does not know"}, rd.Unread)
	})
	t.Run("a text message is untouched", func(t *testing.T) {
		raw := update(`{"message_id":5,"chat":{"id":1,"type":"private"},"date":1,"text":"hi","rich_message":{"blocks":[]}}`)
		m := decode(raw)
		rd := ReadableOf(m, raw)
		assert.Same(t, m, rd.Msg)
	})
	t.Run("a checklist, and a reply to one of its tasks", func(t *testing.T) {
		list := `{"message_id":4,"chat":{"id":1,"type":"private"},"date":1,"checklist":{"title":"Groceries","tasks":[
			{"id":1,"text":"milk"},{"id":2,"text":"eggs","completion_date":5}]}}`
		raw := update(list)
		rd := ReadableOf(decode(raw), raw)
		assert.Equal(t, "Checklist: Groceries\n- [ ] milk\n- [x] eggs", rd.Msg.Text)
		raw = update(`{"message_id":6,"chat":{"id":1,"type":"private"},"date":1,"text":"bought it",
			"reply_to_checklist_task_id":2,"reply_to_message":` + list + `}`)
		rd = ReadableOf(decode(raw), raw)
		assert.Equal(t, "bought it", rd.Msg.Text)
		assert.Equal(t, "Checklist: Groceries\n- [ ] milk\n- [x] eggs", rd.Msg.ReplyToMessage.Text)
		require.NotNil(t, rd.Msg.Quote)
		assert.Equal(t, "eggs", rd.Msg.Quote.Text)
	})
	t.Run("a reply to a rich message", func(t *testing.T) {
		raw := update(`{"message_id":6,"chat":{"id":1,"type":"private"},"date":1,"text":"why?",
			"reply_to_message":{"message_id":3,"chat":{"id":1,"type":"private"},"date":1,"rich_message":{"blocks":[{"type":"heading","size":1,"text":"Plan"}]}}}`)
		rd := ReadableOf(decode(raw), raw)
		assert.Equal(t, "# Plan", rd.Msg.ReplyToMessage.Text)
	})
	t.Run("without the raw update", func(t *testing.T) {
		m := &models.Message{ID: 1}
		assert.Same(t, m, ReadableOf(m, nil).Msg)
		assert.Nil(t, ReadableOf(nil, nil).Msg)
	})
}

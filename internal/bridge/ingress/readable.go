package ingress

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/go-telegram/bot/models"
)

// Readable is what untether can pass on of a message whose content the
// library leaves without text: a rich message (read from the raw update,
// rich.go), a checklist (decoded), and the same for the message it replies
// to; a reply to one task of a checklist quotes that task. Text is the
// message with that text filled in (a copy; m is left alone; nil when m
// is). Unread names what could not be passed on (a photo in a rich
// message, a block of a kind untether does not know), for telling the
// user; Unreadable is set when nothing of the message could be read at all.
type Readable struct {
	Msg        *models.Message
	Unread     []string
	Unreadable bool
}

// ReadableOf reads m; raw is the update it came in as Telegram sent it
// (Note.Raw), nil when unknown.
func ReadableOf(m *models.Message, raw []byte) Readable {
	if m == nil {
		return Readable{}
	}
	out := Readable{Msg: m}
	// The raw update is decoded again only for what the library drops, a
	// rich message, in a message, or the message it replies to, that has
	// no text or caption (a photo without one, a voice note, a sticker):
	// this runs for every message and edit.
	needMsg := m.Text == "" && m.Caption == ""
	needReply := m.ReplyToMessage != nil && m.ReplyToMessage.Text == "" && m.ReplyToMessage.Caption == ""
	var msg, reply map[string]json.RawMessage
	if (needMsg || needReply) && bytes.Contains(raw, []byte(`"rich_message"`)) {
		msg, reply = rawMessage(raw)
	}
	copied := false
	own := func() *models.Message {
		if !copied {
			c := *m
			out.Msg, copied = &c, true
		}
		return out.Msg
	}
	if needMsg {
		switch {
		case len(msg["rich_message"]) > 0 && string(msg["rich_message"]) != "null":
			text, unread, ok := richText(msg["rich_message"])
			out.Unread = unread
			if !ok || text == "" || onlyPlaceholders(text) {
				out.Unreadable = true
				if !ok {
					out.Unread = []string{"a rich message in a form untether does not know"}
				}
				break
			}
			own().Text = text
		case m.Checklist != nil:
			own().Text = checklistText(m.Checklist)
		}
	}
	if r := m.ReplyToMessage; needReply {
		var text string
		switch {
		case len(reply["rich_message"]) > 0 && string(reply["rich_message"]) != "null":
			if t, _, ok := richText(reply["rich_message"]); ok {
				text = t
			}
		case r.Checklist != nil:
			text = checklistText(r.Checklist)
		}
		if text != "" {
			rc := *r
			rc.Text = text
			own().ReplyToMessage = &rc
		}
		if task := checklistTask(r.Checklist, m.ReplyToChecklistTaskID); task != "" && (m.Quote == nil || m.Quote.Text == "") {
			own().Quote = &models.TextQuote{Text: task}
		}
	}
	return out
}

// rawMessage finds the message object of a raw update, and the message it
// replies to; nil maps when raw holds none.
func rawMessage(raw []byte) (msg, reply map[string]json.RawMessage) {
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil {
		return nil, nil
	}
	for _, kind := range []string{"message", "edited_message"} {
		if len(u[kind]) > 0 {
			_ = json.Unmarshal(u[kind], &msg)
			break
		}
	}
	_ = json.Unmarshal(msg["reply_to_message"], &reply)
	return msg, reply
}

// onlyPlaceholders reports a rich message whose every line is a
// placeholder for what untether could not read: there is nothing to pass on.
func onlyPlaceholders(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !(strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") && strings.Contains(l, "untether")) {
			return false
		}
	}
	return true
}

// checklistText is a checklist as text: its title, then one line per task.
func checklistText(c *models.Checklist) string {
	var b strings.Builder
	b.WriteString("Checklist: " + strings.TrimSpace(c.Title))
	for _, t := range c.Tasks {
		mark := "[ ]"
		if t.CompletionDate != 0 || t.CompletedByUser != nil || t.CompletedByChat != nil {
			mark = "[x]"
		}
		b.WriteString("\n- " + mark + " " + strings.Join(strings.Fields(t.Text), " "))
	}
	return b.String()
}

// checklistTask is the text of task id in c, "" if c has none such.
func checklistTask(c *models.Checklist, id int) string {
	if c == nil || id == 0 {
		return ""
	}
	for _, t := range c.Tasks {
		if t.ID == id {
			return t.Text
		}
	}
	return ""
}

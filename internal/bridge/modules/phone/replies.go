package phone

import (
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
)

// A Telegram reply to an earlier message brings that message into the
// prompt: "[replying to …: “…”]", the part the user quoted if they
// selected one, else the message's text, cut to replyQuoteMax. (A reply to
// an open AskUserQuestion message answers the question instead; see
// the engine's questions.go, which runs first.)

// replyQuoteMax bounds the quoted text, in runes.
const replyQuoteMax = 500

// replyContext is the line a reply's prompt starts with, or "".
func (ph *Module) replyContext(c *chat.Chat, m *models.Message) string {
	r := m.ReplyToMessage
	if r == nil || r.ForumTopicCreated != nil {
		return "" // in forums a plain message "replies" to the topic's creation
	}
	who := "an earlier message"
	switch {
	case r.From != nil && r.From.IsBot && r.From.Username == ph.host.BotUsername():
		who = "your (Claude's) earlier message, as untether showed it"
	case r.From != nil && m.From != nil && r.From.ID == m.From.ID:
		who = "their own earlier message"
	case r.From != nil:
		who = "a message from " + senderName(*r.From)
	}
	quoted := firstNonEmptyString(r.Text, r.Caption)
	if r.From != nil && r.From.IsBot {
		// An answer's footer (⏱ time · cost · context · model) is not
		// part of what Claude said.
		if i := strings.LastIndex(quoted, "\n\n⏱"); i > 0 {
			quoted = quoted[:i]
		}
	}
	part := ""
	if m.Quote != nil && m.Quote.Text != "" {
		quoted, part = m.Quote.Text, "this part of "
	}
	if quoted == "" {
		return "[The user is replying to " + who + ": " + mediaKind(r) + ".]\n\n"
	}
	if rs := []rune(quoted); len(rs) > replyQuoteMax {
		quoted = string(rs[:replyQuoteMax]) + "…"
	}
	return "[The user is replying to " + part + who + ": “" + quoted + "”]\n\n"
}

// mediaKind names what a message without text is.
func mediaKind(m *models.Message) string {
	switch {
	case len(m.Photo) > 0:
		return "a picture"
	case m.Document != nil:
		return "the file " + m.Document.FileName
	case m.Voice != nil:
		return "a voice note"
	case m.VideoNote != nil:
		return "a video note"
	case m.Audio != nil:
		return "an audio file"
	case m.Sticker != nil:
		return "a sticker"
	}
	return "a message without text"
}

// withReplyContext returns m with the reply context before its text or
// caption (a copy; m is left alone).
func withReplyContext(m *models.Message, ctx string) *models.Message {
	if ctx == "" {
		return m
	}
	out := *m
	switch {
	case out.Text != "":
		out.Text = ctx + out.Text
	case len(out.Photo) > 0 || out.Document != nil:
		out.Caption = ctx + strings.TrimSpace(out.Caption)
	}
	return &out
}

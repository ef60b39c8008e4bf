package chat

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/render"
)

// Buttons of the phone features. Their tokens live in the bridge's button
// table (approval tokens, edit tokens), except the voice retry's, which is
// a kept voice note's id on disk and so survives a restart (voice.go).
const (
	btnSendEdited ButtonKind = 'e' // ✏️ Send edited version
	btnRetryVoice ButtonKind = 'v' // 🔁 Retry a transcription
)

// phoneState is a chat's state for the phone features; the actor owns it.
type phoneState struct {
	edits   map[string]*editedMessage // by button token
	editIDs []string                  // oldest first, to bound edits
	batch   *batch                    // an album or forwards being collected (batch.go)
	// outboxDirs are the directories the last turn's end found in the
	// chat's outbox, already reported (outbox_scan.go).
	outboxDirs map[string]bool
	// zipping is set while a /get of a directory is zipped: one at a
	// time per chat (get.go). Set on the actor, cleared off it.
	zipping atomic.Bool
}

// editedMessage is an edit the user may send as a new message.
type editedMessage struct {
	msg    *models.Message
	notice *outbox.Message
}

// maxKeptEdits bounds how many edit notices keep a working button.
const maxKeptEdits = 20

// routeEdit hands an edited message to its chat. An edit is never sent to
// Claude by itself: the chat says so and offers to send the new version.
func (b *Engine) routeEdit(updateID int64, m *models.Message) bool {
	if m.ID == 0 || m.Chat.ID == 0 || b.reg.onEdit == nil || !b.admit(m) {
		return false
	}
	c := b.chat(chatKeyOf(m), m.Chat.Type != models.ChatTypePrivate)
	if c == nil {
		return false // draining: an edit notice is not worth keeping
	}
	c.post(item{updateID: updateID, fn: func() { b.reg.onEdit(c, m) }})
	return true
}

// onEdited answers an edited message.
func (c *Chat) onEdited(m *models.Message) {
	if c.phone.edits == nil {
		c.phone.edits = map[string]*editedMessage{}
	}
	if len(c.phone.editIDs) >= maxKeptEdits {
		old := c.phone.editIDs[0]
		c.phone.editIDs = c.phone.editIDs[1:]
		delete(c.phone.edits, old)
		c.b.forgetButton(old)
	}
	token := NewToken()
	c.b.registerButton(token, c.key)
	kb := render.Keyboard{Rows: [][]render.Button{{{Text: "✏️ Send edited version", CallbackData: CallbackData(btnSendEdited, token)}}}}
	notice := c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{
		Text:     "✏️ You edited this message. Edits are not sent to Claude by themselves, so Claude has not seen the change.",
		Keyboard: kb,
	}, outbox.SendOptions{ReplyTo: outbox.MessageID(m.ID)})
	c.phone.edits[token] = &editedMessage{msg: m, notice: notice}
	c.phone.editIDs = append(c.phone.editIDs, token)
}

// sendEdited sends an edited message as if it were new.
func (c *Chat) sendEdited(token string) {
	e, ok := c.phone.edits[token]
	if !ok {
		return
	}
	delete(c.phone.edits, token)
	c.b.forgetButton(token)
	c.b.out.Edit(context.WithoutCancel(c.ctx()), e.notice, outbox.High, outbox.Content{Text: "✏️ You edited this message; the edited version was sent to Claude."})
	c.onMessage(e.msg)
}

// Start prunes kept voice notes older than a day, now and then once a
// day.
func (m phoneModule) Start(ctx context.Context) {
	RunDaily(ctx, func(time.Time) { m.b.pruneVoice(m.b.Config()) })
}

// Register adds the phone features.
func (m phoneModule) Register(r *Registry) {
	r.OnMessage(func(c *Chat, in *Inbound) bool { return c.collect(in.Msg) }) // albums and forwards become one prompt (batch.go)
	r.OnMessage(func(c *Chat, in *Inbound) bool {                             // a reply quotes what it replies to (replies.go)
		in.Quote = c.replyContext(in.Msg)
		in.Quoted = withReplyContext(in.Msg, in.Quote)
		return false
	})
	r.OnMessage(func(c *Chat, in *Inbound) bool { // voice.go
		if !isVoice(in.Msg) {
			return false
		}
		c.onVoice(in.Msg, in.Quote)
		return true
	})
	r.OnMessage(func(c *Chat, in *Inbound) bool { // attachments.go
		if _, ok := attachmentOf(in.Quoted); !ok {
			return false
		}
		c.sendAttachment(in.Quoted)
		return true
	})
	r.OnEdit(func(c *Chat, msg *models.Message) { c.onEdited(msg) })
	r.OnFlush(func(c *Chat) { c.flushBatch() })
	r.Button(btnSendEdited, Button{Ack: "Sending…", Press: func(c *Chat, p Press) { c.sendEdited(p.Token) }})
	r.StoredButton(btnRetryVoice, StoredButton{Ack: "Retrying…", Wait: "untether is restarting; press again once it is back.",
		Resolve: m.b.resolveVoiceRetry, Sample: m.b.sampleVoiceRetry})
}

package phone

import (
	"context"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/render"
)

// Buttons of the phone features. The edit's token lives in the engine's
// button table; the voice retry's is a kept voice note's id on disk, and
// so survives a restart (voice.go).
const (
	btnSendEdited chat.ButtonKind = 'e' // ✏️ Send edited version
	btnRetryVoice chat.ButtonKind = 'v' // 🔁 Retry a transcription
)

// Module is the feature.
type Module struct {
	host  *chat.Host
	dirs  *owndir.Reports
	log   *zerolog.Logger
	state chat.Slot[phoneState]
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, dirs: h.OwnDirs(), log: h.Logger()} }

// phoneState is a chat's state for the phone features; the actor owns it.
type phoneState struct {
	edits   map[string]*editedMessage // by button token
	editIDs []string                  // oldest first, to bound edits
	batch   *batch                    // an album or forwards being collected (batch.go)
}

// editedMessage is an edit the user may send as a new message.
type editedMessage struct {
	msg    *models.Message
	notice *outbox.Message
}

// maxKeptEdits bounds how many edit notices keep a working button.
const maxKeptEdits = 20

// onEdited answers an edited message.
func (ph *Module) onEdited(c *chat.Chat, m *models.Message) {
	st := ph.state.Get(c)
	if st.edits == nil {
		st.edits = map[string]*editedMessage{}
	}
	if len(st.editIDs) >= maxKeptEdits {
		old := st.editIDs[0]
		st.editIDs = st.editIDs[1:]
		delete(st.edits, old)
		c.ForgetButton(old)
	}
	token := chat.NewToken()
	c.RegisterButton(token)
	kb := render.Keyboard{Rows: [][]render.Button{{{Text: "✏️ Send edited version", CallbackData: chat.CallbackData(btnSendEdited, token)}}}}
	notice := c.SendMessage(outbox.High, outbox.Content{
		Text:     "✏️ You edited this message. Edits are not sent to Claude by themselves, so Claude has not seen the change.",
		Keyboard: kb,
	}, outbox.SendOptions{ReplyTo: outbox.MessageID(m.ID)})
	st.edits[token] = &editedMessage{msg: m, notice: notice}
	st.editIDs = append(st.editIDs, token)
}

// sendEdited sends an edited message as if it were new.
func (ph *Module) sendEdited(c *chat.Chat, token string) {
	st := ph.state.Get(c)
	e, ok := st.edits[token]
	if !ok {
		return
	}
	delete(st.edits, token)
	c.ForgetButton(token)
	c.EditMessage(e.notice, outbox.High, outbox.Content{Text: "✏️ You edited this message; the edited version was sent to Claude."})
	c.HandleMessage(e.msg)
}

// Start prunes kept voice notes older than a day, now and then once a
// day.
func (ph *Module) Start(ctx context.Context) {
	chat.RunDaily(ctx, func(time.Time) { ph.pruneVoice(ph.host.Config()) })
}

// Register adds the phone features' message hooks, in their order, the
// handler of edited messages and their buttons.
func (ph *Module) Register(r *chat.Registry) {
	ph.state = chat.NewSlot[phoneState](r)
	r.OnMessage(func(c *chat.Chat, in *chat.Inbound) bool { return ph.collect(c, in.Msg) }) // albums and forwards become one prompt (batch.go)
	r.OnMessage(func(c *chat.Chat, in *chat.Inbound) bool {                                 // a reply quotes what it replies to (replies.go)
		in.Quote = ph.replyContext(c, in.Msg)
		in.Quoted = withReplyContext(in.Msg, in.Quote)
		return false
	})
	r.OnMessage(func(c *chat.Chat, in *chat.Inbound) bool { // voice.go
		if !isVoice(in.Msg) {
			return false
		}
		ph.onVoice(c, in.Msg, in.Quote)
		return true
	})
	r.OnMessage(func(c *chat.Chat, in *chat.Inbound) bool { // attachments.go
		if _, ok := attachmentOf(in.Quoted); !ok {
			return false
		}
		ph.sendAttachment(c, in.Quoted)
		return true
	})
	r.OnEdit(func(c *chat.Chat, msg *models.Message) { ph.onEdited(c, msg) })
	r.OnFlush(func(c *chat.Chat) { ph.flushBatch(c) })
	r.Button(btnSendEdited, chat.Button{Ack: "Sending…", Press: func(c *chat.Chat, p chat.Press) { ph.sendEdited(c, p.Token) }})
	r.StoredButton(btnRetryVoice, chat.StoredButton{Ack: "Retrying…", Wait: "untether is restarting; press again once it is back.",
		Resolve: ph.resolveVoiceRetry, Sample: ph.sampleVoiceRetry})
}

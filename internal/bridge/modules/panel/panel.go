package panel

import (
	"context"
	"errors"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
)

// btnPanel is a panel's button; its token is "<panel token>.<action>".
const btnPanel chat.ButtonKind = 'P'

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	state chat.Slot[shown]
}

// store is what the module keeps of the panels.
type store interface {
	GetPanel(ctx context.Context, key state.ChatKey) (state.Panel, error)
	PutPanel(ctx context.Context, p state.Panel) error
	ListPanels(ctx context.Context) ([]state.Panel, error)
	DeletePanel(ctx context.Context, key state.ChatKey) error
}

// shown is a chat's panel as its actor knows it.
type shown struct {
	loaded bool
	panel  state.Panel // MessageID 0: none
	msg    *outbox.Message
	seen   string // the content it shows, "" when not known (after a restart)
	queued bool   // a redraw is posted
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, store: h.Store()} }

// Register adds /panel, its button and the redraws.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[shown](r)
	r.Command(chat.Command{Name: "panel", Help: "A control panel: model, effort, mode, project, sessions",
		Run: func(c *chat.Chat, in chat.Invocation) { m.send(c) }})
	// While untether restarts a typed command waits for the restart (but
	// /cancel and /status); a press is refused instead, saying so.
	r.StoredButton(btnPanel, chat.StoredButton{Wait: "untether is restarting; press again once it is back.", WaitFirst: true,
		Resolve: m.resolve, Sample: m.sample})
	r.OnSettingsChanged(m.redrawSoon)
}

// Start redraws every stored panel: the config may have changed while
// untether was stopped.
func (m *Module) Start(ctx context.Context) {
	panels, err := m.store.ListPanels(ctx)
	if err != nil {
		m.host.Logger().Error().Err(err).Msg("list the control panels to redraw")
		return
	}
	for _, p := range panels {
		if !m.host.ChatServed(p.Key) {
			continue
		}
		c := m.host.Chat(p.Key)
		if c == nil {
			return // draining
		}
		c.Post(func() { m.redraw(c) })
	}
}

// get is the chat's panel, read from the store the first time.
func (m *Module) get(c *chat.Chat) *shown {
	st := m.state.Get(c)
	if !st.loaded {
		st.loaded = true
		p, err := m.store.GetPanel(c.Ctx(), c.Key())
		switch {
		case err == nil:
			st.panel, st.msg = p, c.Message(int(p.MessageID)).NoReplace()
		case !errors.Is(err, state.ErrNotFound):
			c.Log().Error().Err(err).Msg("read the chat's control panel")
		}
	}
	return st
}

// redrawSoon redraws the panel once the change being made is complete.
func (m *Module) redrawSoon(c *chat.Chat) {
	st := m.get(c)
	if st.panel.MessageID == 0 || st.queued {
		return
	}
	st.queued = true
	c.Post(func() {
		st.queued = false
		m.redraw(c)
	})
}

// redraw edits the panel to show what is true now, when that changed.
func (m *Module) redraw(c *chat.Chat) {
	st := m.get(c)
	if st.panel.MessageID == 0 || st.msg == nil {
		return
	}
	text, kb := m.render(c, st.panel.Token)
	if seen := fingerprint(text, kb); seen != st.seen {
		st.seen = seen
		m.edit(c, st.msg, outbox.Content{Text: text, Keyboard: kb})
	}
}

// edit edits panel message msg. Panels are NoReplace: one the user
// deleted is not sent again as a new message (an uninvited panel at the
// bottom of the chat); the edit says it is gone instead, and the panel is
// forgotten. The outcome is awaited off the actor.
func (m *Module) edit(c *chat.Chat, msg *outbox.Message, content outbox.Content) {
	p := c.EditMessage(msg, outbox.Low, content)
	c.Offload(func(ctx context.Context) func() {
		res, err := p.Wait(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			// Telegram's refusals the outbox logs itself; one it made
			// (an invalid content, a blocked chat) comes at each redraw,
			// so only at debug.
			return func() { c.Log().Debug().Err(err).Msg("edit the control panel") }
		case err == nil && res.Outcome == outbox.OutcomeGone:
			return func() { m.forget(c, msg) }
		}
		return nil
	})
}

// forget drops the chat's panel, message msg, which the user deleted: its
// record (with its pin; Telegram unpins a deleted message itself), so that
// nothing edits it any more, a restart does not redraw it and its token
// opens nothing. A newer /panel made meanwhile is kept.
func (m *Module) forget(c *chat.Chat, msg *outbox.Message) {
	st := m.get(c)
	if st.msg != msg {
		return
	}
	c.Log().Info().Int("message_id", int(msg.ID())).Msg("The control panel was deleted; forgetting it")
	st.panel, st.msg, st.seen = state.Panel{}, nil, ""
	if err := m.store.DeletePanel(c.Ctx(), c.Key()); err != nil {
		c.Log().Error().Err(err).Msg("forget the deleted control panel")
	}
}

// fingerprint is what a panel shows, to skip an edit that changes nothing.
func fingerprint(text string, kb render.Keyboard) string {
	var b strings.Builder
	b.WriteString(text)
	for _, row := range kb.Rows {
		for _, btn := range row {
			b.WriteString("\x00" + btn.Text + "\x01" + btn.CallbackData)
		}
	}
	return b.String()
}

// replacedText is what a panel shows once a newer one replaced it.
const replacedText = "🎛 This panel was replaced by a newer one (/panel)."

// send is /panel: a new panel, which replaces the chat's last one (edited
// to say so, and unpinned if untether pinned it).
func (m *Module) send(c *chat.Chat) {
	st := m.get(c)
	old := st.panel
	if st.msg != nil { // its id may not be known yet: the edit waits for it
		// NoReplace: an old panel the user deleted is not sent again to
		// say it was replaced.
		c.EditMessage(st.msg, outbox.Low, outbox.Content{Text: replacedText})
	}
	token := chat.NewToken()
	text, kb := m.render(c, token)
	msg := c.SendMessage(outbox.Low, outbox.Content{Text: text, Keyboard: kb}, outbox.SendOptions{Silent: true}).NoReplace()
	st.panel, st.msg, st.seen = state.Panel{Key: c.Key(), Token: token}, msg, fingerprint(text, kb)
	pin := c.Config().Telegram.PinPanel
	c.Offload(func(ctx context.Context) func() {
		res, err := msg.Sent().Wait(ctx)
		if err != nil {
			return func() { c.Log().Warn().Err(err).Msg("send the control panel") }
		}
		var pinErr error
		if old.Pinned {
			m.unpinNow(ctx, c, int(old.MessageID))
		}
		if pin {
			pinErr = c.PinMessage(ctx, int(res.MessageID), true)
		}
		return func() {
			if st.msg != msg { // a newer /panel came meanwhile: this one is not kept pinned
				if pin && pinErr == nil {
					m.unpin(c, int(res.MessageID))
				}
				return
			}
			st.panel.MessageID, st.panel.Pinned = state.MessageID(res.MessageID), pin && pinErr == nil
			if err := m.store.PutPanel(c.Ctx(), st.panel); err != nil {
				c.Log().Error().Err(err).Msg("record the control panel")
			}
			if pinErr != nil {
				c.Reply("📌 The panel could not be pinned: "+render.EscapeHTML(pinReason(pinErr))+
					" In a group the bot must be an admin allowed to pin messages.", int(res.MessageID))
			}
		}
	})
}

// unpin unpins message id of the chat, off the actor.
func (m *Module) unpin(c *chat.Chat, id int) {
	c.Offload(func(ctx context.Context) func() {
		m.unpinNow(ctx, c, id)
		return nil
	})
}

// unpinNow unpins a panel a newer one replaced.
func (m *Module) unpinNow(ctx context.Context, c *chat.Chat, id int) {
	if err := c.PinMessage(ctx, id, false); err != nil {
		c.Log().Info().Err(err).Msg("unpin the control panel a newer one replaced")
	}
}

// pinReason is Telegram's refusal without its "Bad Request: " prefix.
func pinReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "Bad Request: "); i >= 0 {
		s = s[i+len("Bad Request: "):]
	}
	return strings.TrimSuffix(s, ".") + "."
}

// resolve finds the chat a press on a panel's button belongs to: the chat
// the pressed message is in, whose panel's token the button carries.
func (m *Module) resolve(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(c *chat.Chat), string) {
	tok, action, ok := strings.Cut(token, ".")
	key, here := chat.PressKey(cq)
	if !ok || !here || actionCommand(action) == "" {
		return state.ChatKey{}, nil, chat.ExpiredText
	}
	p, err := m.store.GetPanel(ctx, key)
	if err != nil || p.Token != tok {
		return state.ChatKey{}, nil, chat.ExpiredText
	}
	from := cq.From
	pressed := cq.Message.Message
	return key, func(c *chat.Chat) { m.press(c, action, &from, pressed) }, ""
}

// press runs the command the button stands for, as if its user had typed
// it under the panel.
func (m *Module) press(c *chat.Chat, action string, from *models.User, pressed *models.Message) {
	msg := &models.Message{ID: pressed.ID, From: from, Chat: pressed.Chat, MessageThreadID: pressed.MessageThreadID, Date: pressed.Date}
	c.RunCommand(actionCommand(action), "", msg)
	m.redrawSoon(c)
}

// sample makes a panel of key whose Model button works (StoredButton.Sample).
func (m *Module) sample(ctx context.Context, key state.ChatKey) (string, error) {
	tok := chat.NewToken()
	if err := m.store.PutPanel(ctx, state.Panel{Key: key, MessageID: 1, Token: tok}); err != nil {
		return "", err
	}
	return tok + "." + actModel, nil
}

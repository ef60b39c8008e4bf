package telegramtest

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Limits the fake enforces, in UTF-16 code units after parsing. Telegram has
// been measured counting code points; UTF-16 is the stricter reading and the
// one the bridge must split by.
const (
	MaxTextLen        = 4096
	MaxCaptionLen     = 1024
	MaxCallbackData   = 64 // bytes
	MaxCallbackAnswer = 200
	deleteWindowHours = 48
)

type chatState struct {
	Chat
	topics   map[ThreadID]bool
	messages map[MessageID]*message
	order    []MessageID
	nextID   MessageID
	drafts   map[ThreadID]Draft // shown now (drafts.go)
}

type message struct {
	Message
	sender       User
	fileUniqueID string
}

// AddChat registers a chat the bot can talk to. Private chats get the peer
// as their default user. Registering an existing id is a test bug.
func (s *Server) AddChat(c Chat) {
	s.t.Helper()
	if c.Type == "" {
		c.Type = Private
	}
	if c.Type == Private && c.FirstName == "" {
		c.FirstName = "User" + strconv.FormatInt(int64(c.ID), 10)
	}
	if c.DefaultUser.ID == 0 {
		if c.Type == Private {
			c.DefaultUser = User{ID: UserID(c.ID), FirstName: c.FirstName, Username: c.Username}
		} else {
			c.DefaultUser = User{ID: 4242, FirstName: "Member"}
		}
	}
	if c.IsForum && c.Type != Supergroup {
		s.t.Fatalf("telegramtest: chat %d: only supergroups can be forums", c.ID)
	}
	st := &chatState{Chat: c, topics: map[ThreadID]bool{}, messages: map[MessageID]*message{}, nextID: 1}
	for _, th := range c.Topics {
		st.topics[th] = true
		st.nextID = max(st.nextID, MessageID(th)+1) // a topic's id is its creation message's id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.chats[c.ID]; dup {
		s.t.Fatalf("telegramtest: chat %d registered twice", c.ID)
	}
	s.chats[c.ID] = st
	s.bumpLocked()
}

// AddTopic creates a forum topic in an existing forum and returns its id.
func (s *Server) AddTopic(chat ChatID) ThreadID {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chat]
	if c == nil || !c.IsForum {
		s.t.Fatalf("telegramtest: AddTopic: chat %d is not a registered forum", chat)
	}
	// A topic's id is the id of its creation message; 1 is General's, which
	// is never a real topic id, so real topic ids start above it.
	if c.nextID <= 1 {
		c.nextID = 2
	}
	th := ThreadID(c.nextID)
	c.nextID++
	c.topics[th] = true
	c.Topics = append(c.Topics, th)
	s.bumpLocked()
	return th
}

func (s *Server) chatLocked(p params) (*chatState, *apiError) {
	if p.str("chat_id") == "" {
		return nil, badRequest("chat_id is empty")
	}
	id, _, err := p.int64("chat_id")
	if err != nil { // "@username" chats are not emulated
		return nil, badRequest("chat not found")
	}
	c := s.chats[ChatID(id)]
	if c == nil {
		return nil, badRequest("chat not found")
	}
	return c, nil
}

func threadLocked(c *chatState, p params) (ThreadID, *apiError) {
	n, _, err := p.int64("message_thread_id")
	if err != nil {
		return 0, badRequest("message thread not found")
	}
	if n == 0 {
		return 0, nil
	}
	if !c.IsForum || !c.topics[ThreadID(n)] {
		return 0, badRequest("message thread not found")
	}
	return ThreadID(n), nil
}

func messageIDParam(p params) (MessageID, *apiError) {
	n, ok, err := p.int64("message_id")
	if !ok || err != nil || n <= 0 {
		return 0, badRequest("message identifier is not specified")
	}
	return MessageID(n), nil
}

// parsed parses text (or a caption) under the request's parse_mode.
func (s *Server) parsed(raw, mode string, p params, entitiesKey string) (string, []Entity, *apiError) {
	if !utf8.ValidString(raw) {
		return "", nil, badRequest("strings must be encoded in UTF-8")
	}
	text, ents, err := parseText(raw, mode, s.cfg.strictAmp)
	var pe *parseError
	switch {
	case errors.Is(err, errBadParseMode):
		return "", nil, badRequest("unsupported parse_mode")
	case errors.As(err, &pe):
		return "", nil, badRequest("%s", pe.Error())
	case err != nil:
		return "", nil, badRequest("%v", err)
	}
	if mode == "" {
		var we []wireEntity
		if _, err := p.json(entitiesKey, &we); err != nil {
			return "", nil, badRequest("can't parse entities JSON object")
		}
		for _, e := range we {
			ents = append(ents, Entity(e))
		}
	}
	return text, ents, nil
}

// keyboard reads reply_markup. present is false when the parameter is absent;
// rows is nil for an empty inline keyboard or a non-inline markup.
func keyboard(p params, inlineOnly bool) (rows [][]Button, present bool, aerr *apiError) {
	var raw map[string]json.RawMessage
	present, err := p.json("reply_markup", &raw)
	if err != nil || present && raw == nil {
		return nil, present, badRequest("can't parse reply keyboard markup JSON object")
	}
	if !present {
		return nil, false, nil
	}
	ik, ok := raw["inline_keyboard"]
	if !ok {
		if inlineOnly {
			return nil, true, badRequest("inline keyboard expected")
		}
		return nil, true, nil // reply keyboards are accepted but never echoed
	}
	var in [][]inButton
	if err := json.Unmarshal(ik, &in); err != nil {
		return nil, true, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, row := range in {
		var out []Button
		for _, b := range row {
			btn, aerr := button(b)
			if aerr != nil {
				return nil, true, aerr
			}
			out = append(out, btn)
		}
		if len(out) > 0 {
			rows = append(rows, out)
		}
	}
	return rows, true, nil
}

// button validates one inline button the way telegram-bot-api does: the
// first action field present wins, in its fixed order, so go-telegram/bot's
// always-present "copy_text":{"text":""} only matters on buttons that have
// no other action.
func button(b inButton) (Button, *apiError) {
	str := func(k string) (string, bool) {
		var v string
		raw, ok := b[k]
		if !ok || json.Unmarshal(raw, &v) != nil {
			return "", false
		}
		return v, true
	}
	text, ok := str("text")
	if !ok {
		return Button{}, badRequest("can't parse inline keyboard button: Field \"text\" must be of type String")
	}
	if text == "" {
		return Button{}, badRequest("BUTTON_TEXT_INVALID")
	}
	if url, ok := str("url"); ok {
		if url == "" {
			return Button{}, badRequest("BUTTON_URL_INVALID")
		}
		return Button{Text: text, URL: url}, nil
	}
	if data, ok := str("callback_data"); ok {
		if len(data) < 1 || len(data) > MaxCallbackData {
			return Button{}, badRequest("BUTTON_DATA_INVALID")
		}
		return Button{Text: text, CallbackData: data}, nil
	}
	for _, k := range []string{"callback_game", "pay", "switch_inline_query", "switch_inline_query_current_chat",
		"switch_inline_query_chosen_chat", "login_url", "web_app"} {
		if _, ok := b[k]; ok {
			return Button{Text: text}, nil
		}
	}
	if raw, ok := b["copy_text"]; ok {
		var ct struct{ Text string }
		if json.Unmarshal(raw, &ct) != nil || ct.Text == "" {
			return Button{}, badRequest("BUTTON_COPY_TEXT_INVALID")
		}
		return Button{Text: text}, nil
	}
	return Button{}, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
}

func sameKeyboard(a, b [][]Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func sameEntities(a, b []Entity) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// store appends a message with the chat's next id.
func (c *chatState) store(m *message) *message {
	m.ID = c.nextID
	m.Chat = c.ID
	c.nextID++
	c.messages[m.ID] = m
	c.order = append(c.order, m.ID)
	if m.FromBot {
		delete(c.drafts, m.Thread) // the message replaces the draft
	}
	return m
}

// copy returns a deep copy safe to hand to tests.
func (m *message) copy() Message {
	out := m.Message
	out.Entities = append([]Entity(nil), m.Entities...)
	if m.Keyboard != nil {
		out.Keyboard = make([][]Button, len(m.Keyboard))
		for i, row := range m.Keyboard {
			out.Keyboard[i] = append([]Button(nil), row...)
		}
	}
	if m.Document != nil {
		d := *m.Document
		out.Document = &d
	}
	out.Photo = append([]PhotoSize(nil), m.Photo...)
	for _, p := range []**Media{&out.Voice, &out.Audio, &out.VideoNote} {
		if *p != nil {
			c := **p
			*p = &c
		}
	}
	if m.ForwardOrigin != nil {
		o := *m.ForwardOrigin
		out.ForwardOrigin = &o
	}
	return out
}

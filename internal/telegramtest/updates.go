package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

type queuedUpdate struct {
	wire wireUpdate
	raw  json.RawMessage // when set, sent instead of wire, verbatim
	obs  Update
}

type poller struct{ kicked chan struct{} }

type queryState struct {
	deadline time.Time
	answered bool
}

// enqueueLocked queues an update unless allowed_updates excludes its kind.
// Like Telegram, the filter applies when an update is created, not when it
// is delivered.
func (s *Server) enqueueLocked(kind string, w wireUpdate, obs Update) (Update, bool) {
	if s.allowed != nil && !s.allowed[kind] {
		return obs, false
	}
	id := s.nextUpdate
	s.nextUpdate++
	w.UpdateID, obs.ID, obs.Kind = int64(id), id, kind
	s.queue = append(s.queue, queuedUpdate{wire: w, obs: obs})
	s.queued = append(s.queued, obs)
	s.bumpLocked()
	return obs, true
}

// enqueueRawLocked queues an entry built from its id and sent verbatim,
// whatever allowed_updates says.
func (s *Server) enqueueRawLocked(kind string, build func(UpdateID) json.RawMessage, obs Update) (UpdateID, error) {
	id := s.nextUpdate
	raw := build(id)
	if !json.Valid(raw) {
		return 0, fmt.Errorf("raw update %d is not valid JSON: %.200s", id, raw)
	}
	s.nextUpdate++
	obs.ID, obs.Kind = id, kind
	s.queue = append(s.queue, queuedUpdate{raw: raw, obs: obs})
	s.queued = append(s.queued, obs)
	s.bumpLocked()
	return id, nil
}

// confirmLocked applies getUpdates' offset: positive confirms everything
// below it, negative keeps only the last -offset updates.
func (s *Server) confirmLocked(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(s.queue) && s.queue[i].obs.ID < UpdateID(offset) {
			i++
		}
		s.queue = s.queue[i:]
		s.confirmed = max(s.confirmed, UpdateID(offset))
	case offset < 0:
		if keep := int(-offset); keep < len(s.queue) {
			s.queue = s.queue[len(s.queue)-keep:]
		}
	}
}

func (s *Server) getUpdates(ctx context.Context, p params) (any, *apiError) {
	offset, _, err1 := p.int64("offset")
	limit, hasLimit, err2 := p.int64("limit")
	timeout, _, err3 := p.int64("timeout")
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, badRequest("wrong parameter in getUpdates request")
	}
	if !hasLimit || limit > 100 {
		limit = 100
	}
	limit = max(limit, 1)
	var allowed []string
	hasAllowed, err := p.json("allowed_updates", &allowed)
	if err != nil {
		return nil, badRequest("can't parse allowed_updates JSON array")
	}

	s.mu.Lock()
	if s.webhookURL != "" {
		s.mu.Unlock()
		return nil, &apiError{code: http.StatusConflict, desc: conflictWebhook}
	}
	if hasAllowed { // persists until the next call that names it
		s.allowed = nil
		if len(allowed) > 0 {
			s.allowed = map[string]bool{}
			for _, a := range allowed {
				s.allowed[a] = true
			}
		}
	}
	s.confirmLocked(offset)
	// Telegram terminates the earlier of two concurrent long polls.
	if s.poll != nil {
		close(s.poll.kicked)
	}
	me := &poller{kicked: make(chan struct{})}
	s.poll = me
	s.bumpLocked()
	defer func() {
		s.mu.Lock()
		if s.poll == me {
			s.poll = nil
		}
		s.mu.Unlock()
	}()

	timer := time.NewTimer(time.Duration(max(timeout, 0)) * time.Second)
	defer timer.Stop()
	expired := timeout <= 0
	for {
		if n := min(int(limit), len(s.queue)); n > 0 || expired {
			out := make([]any, n) // [] rather than null when empty
			for i := range n {
				out[i] = s.queue[i].wire
				if s.queue[i].raw != nil {
					out[i] = s.queue[i].raw
				}
				s.handedOut = append(s.handedOut, s.queue[i].obs.ID)
			}
			s.bumpLocked()
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			expired = true
		case <-s.done:
			expired = true
		case <-me.kicked:
			return nil, &apiError{code: http.StatusConflict, desc: conflictPoller}
		case <-ctx.Done():
			return []wireUpdate{}, nil // nobody is listening any more
		}
		s.mu.Lock()
	}
}

// UserOption adjusts a message sent by [Server.UserSends].
type UserOption func(*userMsg)

type userMsg struct {
	thread     ThreadID
	replyTo    MessageID
	entities   []Entity
	set        bool
	rawFields  map[string]json.RawMessage
	mediaGroup string
	forward    *ForwardOrigin
	quote      string
}

// InTopic posts the message in a forum topic.
func InTopic(th ThreadID) UserOption { return func(u *userMsg) { u.thread = th } }

// ReplyingTo makes the message a reply.
func ReplyingTo(id MessageID) UserOption { return func(u *userMsg) { u.replyTo = id } }

// WithEntities replaces the automatically detected entities.
func WithEntities(es ...Entity) UserOption {
	return func(u *userMsg) { u.entities, u.set = es, true }
}

// UserSends posts a user message and queues a "message" update for the bot.
// Bot commands (a "/" at the start or after whitespace) get bot_command
// entities with UTF-16 offsets, as Telegram adds them. In a supergroup a
// reply outside any topic carries the thread of the message replied to but
// is not a topic message, the trap described in tdlib/telegram-bot-api#447.
// A bad chat, topic or reply target fails the test.
func (s *Server) UserSends(chat ChatID, user User, text string, opts ...UserOption) Message {
	s.t.Helper()
	m, err := s.TryUserSends(chat, user, text, opts...)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSends: %v", err)
	}
	return m
}

// TryUserSends is [Server.UserSends] returning errors instead of failing the
// test, for use off the test goroutine.
func (s *Server) TryUserSends(chat ChatID, user User, text string, opts ...UserOption) (Message, error) {
	return s.postAsUser(chat, user, userContent{text: text}, opts)
}

// userContent is what a user message carries: text alone, or a caption with
// a photo's sizes (smallest first) or one document. The files enter the
// store only once the message is accepted.
type userContent struct {
	text  string
	files []*storedFile
}

func (s *Server) postAsUser(chat ChatID, user User, content userContent, opts []UserOption) (Message, error) {
	text := content.text
	var o userMsg
	for _, opt := range opts {
		opt(&o)
	}
	if user.FirstName == "" {
		user.FirstName = "User" + strconv.FormatInt(int64(user.ID), 10)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chat]
	if c == nil {
		return Message{}, fmt.Errorf("send as user %d: chat %d is not registered", user.ID, chat)
	}
	m := &message{Message: Message{FromBot: false, From: user.ID, Date: s.now(), Raw: text, Text: text, ReplyTo: o.replyTo,
		MediaGroupID: o.mediaGroup, ForwardOrigin: o.forward}, sender: user}
	if o.thread != 0 {
		if !c.topics[o.thread] {
			return Message{}, fmt.Errorf("send to chat %d: topic %d does not exist", chat, o.thread)
		}
		m.Thread, m.IsTopic = o.thread, true
	}
	if o.replyTo != 0 {
		target := c.messages[o.replyTo]
		if target == nil || target.Deleted {
			return Message{}, fmt.Errorf("send to chat %d: reply target %d does not exist", chat, o.replyTo)
		}
		if o.quote != "" {
			if !strings.Contains(target.Text, o.quote) {
				return Message{}, fmt.Errorf("send to chat %d: quote %q is not part of message %d", chat, o.quote, o.replyTo)
			}
			m.Quote = o.quote
		}
		if m.Thread == 0 && c.Type == Supergroup {
			m.Thread = target.Thread
			if m.Thread == 0 {
				m.Thread = ThreadID(target.ID)
			}
		}
	}
	m.Entities = o.entities
	if !o.set {
		m.Entities = commandEntities(text)
	}
	for _, f := range content.files {
		s.addFileLocked(f)
		switch f.dir {
		case "photos":
			m.Photo = append(m.Photo, PhotoSize{FileID: f.id, FileUniqueID: f.uniqueID, Width: f.width, Height: f.height, FileSize: len(f.data)})
		case dirVoice:
			m.Voice, m.fileUniqueID = f.media(), f.uniqueID
		case dirAudio:
			m.Audio, m.fileUniqueID = f.media(), f.uniqueID
		case dirVideoNote:
			m.VideoNote, m.fileUniqueID = f.media(), f.uniqueID
		default:
			m.Document, m.fileUniqueID = f.document(), f.uniqueID
		}
	}
	c.store(m)
	w := s.wireMessageLocked(c, m, 0)
	if o.rawFields == nil {
		s.enqueueLocked("message", wireUpdate{Message: w}, Update{Message: m.copy()})
		return m.copy(), nil
	}
	if s.allowed != nil && !s.allowed["message"] {
		return m.copy(), nil // filtered at creation, like any message
	}
	build, err := withFields(w, o.rawFields)
	if err == nil {
		_, err = s.enqueueRawLocked("message", build, Update{Message: m.copy()})
	}
	if err != nil {
		return Message{}, fmt.Errorf("send as user %d: %w", user.ID, err)
	}
	return m.copy(), nil
}

// commandEntities finds /commands the way Telegram marks them for bots.
func commandEntities(text string) []Entity {
	var out []Entity
	pos, prevSpace := 0, true
	runes := []rune(text)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == '/' && prevSpace {
			j := i + 1
			for j < len(runes) && (isCmdRune(runes[j]) || runes[j] == '@') {
				j++
			}
			if j > i+1 {
				out = append(out, Entity{Type: "bot_command", Offset: pos, Length: utf16Len(string(runes[i:j]))})
				pos += utf16Len(string(runes[i:j]))
				i = j - 1
				prevSpace = false
				continue
			}
		}
		pos += utf16Len(string(r))
		prevSpace = unicode.IsSpace(r)
	}
	return out
}

func isCmdRune(r rune) bool {
	return r < 128 && (r == '_' || isAlnum(byte(r)))
}

// UserPresses presses the inline button carrying data on a bot message, as
// the chat's default user, and returns the callback query id. It fails the
// test if the message is missing, deleted, or has no such button: pressing a
// stale keyboard is exactly the bug these tests exist to catch.
func (s *Server) UserPresses(chat ChatID, msg MessageID, data string) CallbackQueryID {
	s.t.Helper()
	id, err := s.TryUserPresses(chat, User{}, msg, data)
	if err != nil {
		s.t.Fatalf("telegramtest: UserPresses: %v", err)
	}
	return id
}

// TryUserPresses is [Server.UserPresses] as a specific user (zero means the
// chat's default user), returning errors instead of failing the test.
func (s *Server) TryUserPresses(chat ChatID, user User, msg MessageID, data string) (CallbackQueryID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chat]
	if c == nil {
		return "", fmt.Errorf("press in chat %d: chat is not registered", chat)
	}
	m := c.messages[msg]
	switch {
	case m == nil:
		return "", fmt.Errorf("press on message %d in chat %d: no such message", msg, chat)
	case m.Deleted:
		return "", fmt.Errorf("press on message %d in chat %d: message was deleted", msg, chat)
	case !m.HasButton(data):
		return "", fmt.Errorf("press %q on message %d in chat %d: no button with that callback_data (keyboard %v)", data, msg, chat, m.Keyboard)
	}
	return s.pressLocked(c, user, m, data), nil
}

// ForgePress presses a button that is not on the message: a client can
// send any callback data for a message it sees (messages.getBotCallbackAnswer
// takes the data from the client), so a token copied from another chat can
// arrive on any bot message. The message must exist; user zero is the
// chat's default user.
func (s *Server) ForgePress(chat ChatID, user User, msg MessageID, data string) CallbackQueryID {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m := s.liveLocked("ForgePress", chat, msg)
	return s.pressLocked(c, user, m, data)
}

// UserDeletes deletes a message as a user does in their client (in a
// private chat anyone may delete any message for both sides): it is gone
// and no longer pinned, later edits of it fail with "message to edit not
// found", and, as with Telegram, the bot is not told (no update). It fails
// the test if the chat has no such message, or it was already deleted.
func (s *Server) UserDeletes(chat ChatID, msg MessageID) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, m := s.liveLocked("UserDeletes", chat, msg)
	m.Deleted, m.Pinned = true, false
	s.bumpLocked()
}

// liveLocked is message msg of chat for the test helper named helper,
// which fails the test (ending it) if there is no such message or it was
// deleted.
func (s *Server) liveLocked(helper string, chat ChatID, msg MessageID) (*chatState, *message) {
	s.t.Helper()
	c := s.chats[chat]
	if c == nil || c.messages[msg] == nil || c.messages[msg].Deleted {
		s.t.Fatalf("telegramtest: %s: no message %d in chat %d", helper, msg, chat)
	}
	return c, c.messages[msg]
}

func (s *Server) pressLocked(c *chatState, user User, m *message, data string) CallbackQueryID {
	chat := c.ID
	if user.ID == 0 {
		user = c.DefaultUser
	}
	s.nextQuery++
	id := CallbackQueryID(strconv.FormatInt(4382000000000000000+s.nextQuery, 10))
	s.queries[id] = &queryState{deadline: s.now().Add(s.cfg.callbackTimeout)}
	w := wireUpdate{CallbackQuery: &wireCallbackQuery{
		ID: string(id), From: user.wire(), Message: s.wireMessageLocked(c, m, 0),
		ChatInstance: strconv.FormatInt(-int64(chat)*7919-104729, 10), Data: data,
	}}
	s.enqueueLocked("callback_query", w, Update{Message: m.copy(), QueryID: id, From: user.ID, Data: data})
	return id
}

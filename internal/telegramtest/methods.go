package telegramtest

import (
	"context"
	"mime"
	"net/url"
	"path"
	"regexp"
	"time"
)

// Descriptions the bridge classifies errors by. They are Telegram's wording.
const (
	descNotModified = "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	descQueryTooOld = "query is too old and response timeout expired or query ID is invalid"
	conflictPoller  = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	conflictWebhook = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
)

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

var commandRe = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) getMe(context.Context, params) (any, *apiError) {
	return s.botUser(true), nil
}

// Every method below validates in the order chat → thread → content →
// flood control → apply, so a rejected call never changes state.

func (s *Server) sendMessage(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	th, aerr := threadLocked(c, p)
	if aerr != nil {
		return nil, aerr
	}
	raw, mode := p.str("text"), p.str("parse_mode")
	text, ents, aerr := s.parsed(raw, mode, p, "entities")
	switch {
	case aerr != nil:
		return nil, aerr
	case text == "":
		return nil, badRequest("message text is empty")
	case utf16Len(text) > MaxTextLen:
		return nil, badRequest("message is too long")
	}
	kb, _, aerr := keyboard(p, false)
	if aerr != nil {
		return nil, aerr
	}
	replyTo, aerr := replyTarget(c, p)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkFloodLocked(c, "sendMessage"); aerr != nil {
		return nil, aerr
	}
	m := c.store(&message{Message: Message{
		Thread: th, IsTopic: th != 0, FromBot: true, Date: s.now(), Raw: raw, ParseMode: mode,
		Text: text, Entities: ents, Keyboard: kb, ReplyTo: replyTo,
	}})
	s.bumpLocked()
	return s.wireMessageLocked(c, m, 0), nil
}

// replyTarget reads reply_parameters (or the older reply_to_message_id).
func replyTarget(c *chatState, p params) (MessageID, *apiError) {
	var rp struct {
		MessageID                int  `json:"message_id"`
		AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
	}
	if _, err := p.json("reply_parameters", &rp); err != nil {
		return 0, badRequest("can't parse reply parameters JSON object")
	}
	if rp.MessageID == 0 {
		n, _, _ := p.int64("reply_to_message_id")
		rp.MessageID, rp.AllowSendingWithoutReply = int(n), p.bool("allow_sending_without_reply")
	}
	if rp.MessageID == 0 {
		return 0, nil
	}
	if m := c.messages[MessageID(rp.MessageID)]; m == nil || m.Deleted {
		if rp.AllowSendingWithoutReply {
			return 0, nil
		}
		return 0, badRequest("message to be replied not found")
	}
	return MessageID(rp.MessageID), nil
}

// editTargetLocked finds the bot message an edit refers to.
func (s *Server) editTargetLocked(p params) (*chatState, *message, *apiError) {
	if p.str("inline_message_id") != "" {
		return nil, nil, badRequest("MESSAGE_ID_INVALID") // inline messages are not emulated
	}
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, nil, aerr
	}
	id, aerr := messageIDParam(p)
	if aerr != nil {
		return nil, nil, aerr
	}
	m := c.messages[id]
	if m == nil || m.Deleted {
		return nil, nil, badRequest("message to edit not found")
	}
	if !m.FromBot {
		return nil, nil, badRequest("message can't be edited")
	}
	return c, m, nil
}

func (s *Server) editMessageText(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, aerr := s.editTargetLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	if m.Document != nil {
		return nil, badRequest("there is no text in the message to edit")
	}
	raw, mode := p.str("text"), p.str("parse_mode")
	text, ents, aerr := s.parsed(raw, mode, p, "entities")
	switch {
	case aerr != nil:
		return nil, aerr
	case text == "":
		return nil, badRequest("text must be non-empty")
	case utf16Len(text) > MaxTextLen:
		return nil, badRequest("message is too long")
	}
	// An absent reply_markup means "no keyboard": editing text without
	// resending the buttons removes them, exactly as Telegram does.
	kb, _, aerr := keyboard(p, true)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkFloodLocked(c, "editMessageText"); aerr != nil {
		return nil, aerr
	}
	if text == m.Text && sameEntities(ents, m.Entities) && sameKeyboard(kb, m.Keyboard) {
		return nil, badRequest(descNotModified)
	}
	m.Raw, m.ParseMode, m.Text, m.Entities, m.Keyboard = raw, mode, text, ents, kb
	m.EditDate, m.EditCount = s.now(), m.EditCount+1
	s.bumpLocked()
	return s.wireMessageLocked(c, m, 0), nil
}

func (s *Server) editMessageReplyMarkup(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, aerr := s.editTargetLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	kb, _, aerr := keyboard(p, true)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkFloodLocked(c, "editMessageReplyMarkup"); aerr != nil {
		return nil, aerr
	}
	if sameKeyboard(kb, m.Keyboard) {
		return nil, badRequest(descNotModified)
	}
	m.Keyboard, m.EditDate, m.EditCount = kb, s.now(), m.EditCount+1
	s.bumpLocked()
	return s.wireMessageLocked(c, m, 0), nil
}

func (s *Server) deleteMessage(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	id, aerr := messageIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	m := c.messages[id]
	if m == nil || m.Deleted {
		return nil, badRequest("message to delete not found")
	}
	if s.now().Sub(m.Date) >= deleteWindowHours*time.Hour {
		return nil, badRequest("message can't be deleted")
	}
	if aerr := s.checkFloodLocked(c, "deleteMessage"); aerr != nil {
		return nil, aerr
	}
	m.Deleted = true
	s.bumpLocked()
	return true, nil
}

func (s *Server) answerCallbackQuery(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := CallbackQueryID(p.str("callback_query_id"))
	q := s.queries[id]
	if q == nil || q.answered || !s.now().Before(q.deadline) {
		return nil, badRequest(descQueryTooOld)
	}
	text := p.str("text")
	if utf16Len(text) > MaxCallbackAnswer {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	q.answered = true
	s.answers = append(s.answers, CallbackAnswer{
		QueryID: id, Text: text, ShowAlert: p.bool("show_alert"), URL: p.str("url"), Time: s.now(),
	})
	s.bumpLocked()
	return true, nil
}

func (s *Server) sendChatAction(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	th, aerr := threadLocked(c, p)
	if aerr != nil {
		return nil, aerr
	}
	action := p.str("action")
	if !chatActions[action] {
		return nil, badRequest("wrong parameter action in request")
	}
	if aerr := s.checkFloodLocked(c, "sendChatAction"); aerr != nil {
		return nil, aerr
	}
	s.actions = append(s.actions, ChatAction{Chat: c.ID, Thread: th, Action: action, Time: s.now()})
	delete(c.drafts, th) // drafts.go: a chat action replaces the draft
	s.bumpLocked()
	return true, nil
}

// commandKey is setMyCommands' storage key: scope type plus language.
type commandKey struct{ scope, lang string }

func commandKeyOf(p params) (commandKey, *apiError) {
	var scope struct {
		Type string `json:"type"`
	}
	if _, err := p.json("scope", &scope); err != nil {
		return commandKey{}, badRequest("can't parse BotCommandScope JSON object")
	}
	if scope.Type == "" {
		scope.Type = "default"
	}
	return commandKey{scope: scope.Type, lang: p.str("language_code")}, nil
}

func (s *Server) setMyCommands(_ context.Context, p params) (any, *apiError) {
	key, aerr := commandKeyOf(p)
	if aerr != nil {
		return nil, aerr
	}
	var in []wireBotCommand
	if _, err := p.json("commands", &in); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(in) > 100 {
		return nil, badRequest("BOT_COMMANDS_TOO_MUCH")
	}
	cmds := make([]BotCommand, 0, len(in))
	for _, c := range in {
		if !commandRe.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := utf16Len(c.Description); n < 1 || n > 256 {
			return nil, badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
		cmds = append(cmds, BotCommand(c))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands[key] = cmds
	s.bumpLocked()
	return true, nil
}

func (s *Server) getMyCommands(_ context.Context, p params) (any, *apiError) {
	key, aerr := commandKeyOf(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []wireBotCommand{} // an empty list is [], never null
	for _, c := range s.commands[key] {
		out = append(out, wireBotCommand(c))
	}
	return out, nil
}

func (s *Server) deleteMyCommands(_ context.Context, p params) (any, *apiError) {
	key, aerr := commandKeyOf(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.commands, key)
	s.bumpLocked()
	return true, nil
}

func (s *Server) sendDocument(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	th, aerr := threadLocked(c, p)
	if aerr != nil {
		return nil, aerr
	}
	file, isNew, aerr := s.documentLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	raw, mode := p.str("caption"), p.str("parse_mode")
	caption, ents, aerr := s.parsed(raw, mode, p, "caption_entities")
	if aerr != nil {
		return nil, aerr
	}
	if utf16Len(caption) > MaxCaptionLen {
		return nil, badRequest("message caption is too long")
	}
	kb, _, aerr := keyboard(p, false)
	if aerr != nil {
		return nil, aerr
	}
	replyTo, aerr := replyTarget(c, p)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkFloodLocked(c, "sendDocument"); aerr != nil {
		return nil, aerr
	}
	if isNew {
		s.addFileLocked(file)
	}
	m := c.store(&message{Message: Message{
		Thread: th, IsTopic: th != 0, FromBot: true, Date: s.now(), Raw: raw, ParseMode: mode,
		Text: caption, Entities: ents, Keyboard: kb, ReplyTo: replyTo, Document: file.document(),
	}, fileUniqueID: file.uniqueID})
	s.bumpLocked()
	return s.wireMessageLocked(c, m, 0), nil
}

// documentLocked resolves the document parameter: an uploaded part, a known
// file_id, or an HTTP URL Telegram would fetch. A new file (isNew) is stored
// by the caller once the whole request is accepted, so a rejected call leaves
// no file behind.
func (s *Server) documentLocked(p params) (f *storedFile, isNew bool, aerr *apiError) {
	if part, ok := p.files["document"]; ok {
		mt := part.contentType
		if mt == "" || mt == "application/octet-stream" {
			mt = mimeByName(part.name)
		}
		return newDocumentFile(part.name, mt, part.data), true, nil
	}
	ref := p.str("document")
	if ref == "" {
		return nil, false, badRequest("there is no document in the request")
	}
	if f, ok := s.files[ref]; ok {
		if f.isPhoto() {
			return nil, false, badRequest("can't use file of type Photo as Document")
		}
		return f, false, nil
	}
	if u, err := url.Parse(ref); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		// The fake does not fetch the URL, so the file has no bytes.
		name := path.Base(u.Path)
		return newDocumentFile(name, mimeByName(name), nil), true, nil
	}
	return nil, false, badRequest("wrong file identifier/HTTP URL specified")
}

// mimeByName guesses a MIME type from the file name, as Telegram does for
// uploads labelled application/octet-stream.
func mimeByName(name string) string {
	if byExt := mime.TypeByExtension(path.Ext(name)); byExt != "" {
		if mt, _, err := mime.ParseMediaType(byExt); err == nil {
			return mt
		}
	}
	return "application/octet-stream"
}

func (s *Server) setWebhook(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookURL = p.str("url")
	s.bumpLocked()
	return true, nil
}

func (s *Server) deleteWebhook(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookURL = ""
	if p.bool("drop_pending_updates") {
		s.queue = nil
	}
	s.bumpLocked()
	return true, nil
}

func (s *Server) getWebhookInfo(context.Context, params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return wireWebhookInfo{URL: s.webhookURL, PendingUpdateCount: len(s.queue)}, nil
}

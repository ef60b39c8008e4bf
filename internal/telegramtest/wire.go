package telegramtest

import (
	"encoding/json"
	"time"
)

// The wire* structs are the fake's own reading of the Bot API object
// reference. They are kept independent of go-telegram/bot's models on purpose:
// the contract tests decode these with the real client and compare them with
// fixtures, which only means something if the two sides were written apart.

type envelope struct {
	OK          bool            `json:"ok"`
	Result      any             `json:"result,omitempty"`
	ErrorCode   int             `json:"error_code,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  *wireParameters `json:"parameters,omitempty"`
}

type wireParameters struct {
	MigrateToChatID int64 `json:"migrate_to_chat_id,omitempty"`
	RetryAfter      int   `json:"retry_after,omitempty"`
}

type wireUser struct {
	ID                      int64  `json:"id"`
	IsBot                   bool   `json:"is_bot"`
	FirstName               string `json:"first_name"`
	Username                string `json:"username,omitempty"`
	CanJoinGroups           *bool  `json:"can_join_groups,omitempty"`
	CanReadAllGroupMessages *bool  `json:"can_read_all_group_messages,omitempty"`
	SupportsInlineQueries   *bool  `json:"supports_inline_queries,omitempty"`
	CanConnectToBusiness    *bool  `json:"can_connect_to_business,omitempty"`
	HasMainWebApp           *bool  `json:"has_main_web_app,omitempty"`
}

type wireChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	IsForum   bool   `json:"is_forum,omitempty"`
}

type wireEntity struct {
	Type     string `json:"type"`
	Offset   int    `json:"offset"`
	Length   int    `json:"length"`
	URL      string `json:"url,omitempty"`
	Language string `json:"language,omitempty"`
}

type wireButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

type wireKeyboard struct {
	InlineKeyboard [][]wireButton `json:"inline_keyboard"`
}

type wireDocument struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

type wirePhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

type wireVoice struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Duration     int    `json:"duration"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

type wireAudio struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Duration     int    `json:"duration"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

type wireVideoNote struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Length       int    `json:"length"`
	Duration     int    `json:"duration"`
	FileSize     int    `json:"file_size,omitempty"`
}

// wireOrigin is MessageOrigin: one object whose "type" says which of the
// optional members are present.
type wireOrigin struct {
	Type            string    `json:"type"`
	Date            int64     `json:"date"`
	SenderUser      *wireUser `json:"sender_user,omitempty"`
	SenderUserName  string    `json:"sender_user_name,omitempty"`
	SenderChat      *wireChat `json:"sender_chat,omitempty"`
	Chat            *wireChat `json:"chat,omitempty"`
	MessageID       int       `json:"message_id,omitempty"`
	AuthorSignature string    `json:"author_signature,omitempty"`
}

type wireQuote struct {
	Text     string `json:"text"`
	Position int    `json:"position"`
	IsManual bool   `json:"is_manual,omitempty"`
}

type wireMessage struct {
	MessageID       int             `json:"message_id"`
	MessageThreadID int             `json:"message_thread_id,omitempty"`
	From            *wireUser       `json:"from,omitempty"`
	Chat            wireChat        `json:"chat"`
	Date            int64           `json:"date"`
	EditDate        int64           `json:"edit_date,omitempty"`
	IsTopicMessage  bool            `json:"is_topic_message,omitempty"`
	ReplyToMessage  *wireMessage    `json:"reply_to_message,omitempty"`
	Text            string          `json:"text,omitempty"`
	Entities        []wireEntity    `json:"entities,omitempty"`
	Document        *wireDocument   `json:"document,omitempty"`
	Photo           []wirePhotoSize `json:"photo,omitempty"`
	Voice           *wireVoice      `json:"voice,omitempty"`
	Audio           *wireAudio      `json:"audio,omitempty"`
	VideoNote       *wireVideoNote  `json:"video_note,omitempty"`
	MediaGroupID    string          `json:"media_group_id,omitempty"`
	ForwardOrigin   *wireOrigin     `json:"forward_origin,omitempty"`
	Quote           *wireQuote      `json:"quote,omitempty"`
	Caption         string          `json:"caption,omitempty"`
	CaptionEntities []wireEntity    `json:"caption_entities,omitempty"`
	ReplyMarkup     *wireKeyboard   `json:"reply_markup,omitempty"`
}

type wireCallbackQuery struct {
	ID           string       `json:"id"`
	From         wireUser     `json:"from"`
	Message      *wireMessage `json:"message,omitempty"`
	ChatInstance string       `json:"chat_instance"`
	Data         string       `json:"data,omitempty"`
}

type wireUpdate struct {
	UpdateID      int64              `json:"update_id"`
	Message       *wireMessage       `json:"message,omitempty"`
	EditedMessage *wireMessage       `json:"edited_message,omitempty"`
	CallbackQuery *wireCallbackQuery `json:"callback_query,omitempty"`
}

type wireBotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

type wireWebhookInfo struct {
	URL                  string `json:"url"`
	HasCustomCertificate bool   `json:"has_custom_certificate"`
	PendingUpdateCount   int    `json:"pending_update_count"`
}

// inButton is a button as a client sent it: every key is kept so the fake can
// count actions without knowing each optional field's type.
type inButton map[string]json.RawMessage

type inKeyboard struct {
	InlineKeyboard *[][]inButton `json:"inline_keyboard"`
}

func wireEntities(es []Entity) []wireEntity {
	if len(es) == 0 {
		return nil
	}
	out := make([]wireEntity, len(es))
	for i, e := range es {
		out[i] = wireEntity(e)
	}
	return out
}

func wireKeyboardOf(kb [][]Button) *wireKeyboard {
	if len(kb) == 0 {
		return nil
	}
	rows := make([][]wireButton, len(kb))
	for i, row := range kb {
		rows[i] = make([]wireButton, len(row))
		for j, b := range row {
			rows[i][j] = wireButton{Text: b.Text, URL: b.URL, CallbackData: b.CallbackData}
		}
	}
	return &wireKeyboard{InlineKeyboard: rows}
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func (c *chatState) wire() wireChat {
	w := wireChat{ID: int64(c.ID), Type: string(c.Type), Title: c.Title, IsForum: c.IsForum}
	if c.Type == Private {
		w.FirstName, w.Username, w.Title = c.FirstName, c.Username, ""
	}
	return w
}

func (u User) wire() wireUser {
	return wireUser{ID: int64(u.ID), FirstName: u.FirstName, Username: u.Username}
}

// wireMessageLocked renders a stored message. Nested replies are rendered one level deep,
// as Telegram does ("will not contain further reply_to_message fields").
func (s *Server) wireMessageLocked(c *chatState, m *message, depth int) *wireMessage {
	w := &wireMessage{
		MessageID: int(m.ID),
		Chat:      c.wire(),
		Date:      unixOrZero(m.Date),
		EditDate:  unixOrZero(m.EditDate),
	}
	if m.Thread != 0 {
		w.MessageThreadID, w.IsTopicMessage = int(m.Thread), m.IsTopic
	}
	if m.FromBot {
		bu := s.botUser(false)
		w.From = &bu
	} else {
		u := m.sender.wire()
		w.From = &u
	}
	switch {
	case m.Document != nil:
		d := m.Document
		w.Document = &wireDocument{FileID: d.FileID, FileUniqueID: m.fileUniqueID, FileName: d.FileName, MimeType: d.MimeType, FileSize: len(d.Data)}
		w.Caption, w.CaptionEntities = m.Text, wireEntities(m.Entities)
	case len(m.Photo) > 0:
		for _, p := range m.Photo {
			w.Photo = append(w.Photo, wirePhotoSize(p))
		}
		w.Caption, w.CaptionEntities = m.Text, wireEntities(m.Entities)
	case m.Voice != nil || m.Audio != nil || m.VideoNote != nil:
		wireMediaOf(w, m) // media_user.go
		w.Caption, w.CaptionEntities = m.Text, wireEntities(m.Entities)
	default:
		w.Text, w.Entities = m.Text, wireEntities(m.Entities)
	}
	w.MediaGroupID = m.MediaGroupID
	w.ForwardOrigin = wireOriginOf(m.ForwardOrigin)
	if m.Quote != "" && m.ReplyTo != 0 {
		w.Quote = &wireQuote{Text: m.Quote, Position: quotePosition(c, m), IsManual: true}
	}
	w.ReplyMarkup = wireKeyboardOf(m.Keyboard)
	if m.ReplyTo != 0 && depth == 0 {
		if r, ok := c.messages[m.ReplyTo]; ok && !r.Deleted {
			w.ReplyToMessage = s.wireMessageLocked(c, r, depth+1)
		}
	}
	return w
}

// botUser is the bot as a message sender; getMe adds the capability flags
// that only getMe returns.
func (s *Server) botUser(forGetMe bool) wireUser {
	u := wireUser{ID: s.botID, IsBot: true, FirstName: s.cfg.botName, Username: s.cfg.botUsername}
	if forGetMe {
		t, f := true, false
		u.CanJoinGroups, u.CanReadAllGroupMessages, u.SupportsInlineQueries = &t, &f, &f
		u.CanConnectToBusiness, u.HasMainWebApp = &f, &f
	}
	return u
}

package telegramtest

import (
	"strings"
	"sync"
	"time"
)

// Identifiers are typed so a test cannot pass a message id where a chat id is
// expected; their underlying types match the Bot API's integer widths.
type (
	// ChatID identifies a chat. Private chats use the peer's user id, groups
	// and supergroups use negative ids, as in Telegram.
	ChatID int64
	// UserID identifies a human user (the bot's own id comes from the token).
	UserID int64
	// MessageID is unique only within one chat.
	MessageID int
	// ThreadID is a forum topic id; zero means "no topic" (General).
	ThreadID int
	// UpdateID is the global, increasing getUpdates identifier.
	UpdateID int64
	// CallbackQueryID is the opaque string a bot passes to answerCallbackQuery.
	CallbackQueryID string
)

// ChatType is the Bot API chat type string.
type ChatType string

// Chat types the fake supports.
const (
	Private    ChatType = "private"
	Group      ChatType = "group"
	Supergroup ChatType = "supergroup"
)

// User is a human participant the test speaks for.
type User struct {
	ID        UserID
	FirstName string
	Username  string
}

// Chat is registered with [Server.AddChat] before the bot may use it.
type Chat struct {
	ID    ChatID
	Type  ChatType
	Title string // groups and supergroups
	// FirstName and Username describe the peer of a private chat.
	FirstName string
	Username  string
	// IsForum enables forum topics (supergroups only); Topics lists the
	// topic thread ids that exist. General is implicit and has no id.
	IsForum bool
	Topics  []ThreadID
	// BotCanManageTopics makes the bot an administrator allowed to manage
	// the forum's topics: without it createForumTopic is refused.
	BotCanManageTopics bool
	// BotCanPin makes the bot an administrator allowed to pin messages in a
	// group or supergroup: without it pinChatMessage is refused there (in
	// a private chat a bot may always pin).
	BotCanPin bool
	// DefaultUser is who [Server.UserPresses] acts as. Zero means the peer
	// for private chats and a generic member for groups.
	DefaultUser User
}

// Entity is a MessageEntity with offsets and lengths in UTF-16 code units.
type Entity struct {
	Type     string
	Offset   int
	Length   int
	URL      string
	Language string
}

// Button is an inline keyboard button as the bot sent it.
type Button struct {
	Text         string
	CallbackData string
	URL          string
}

// PhotoSize is one size of a photo a user sent.
type PhotoSize struct {
	FileID       string
	FileUniqueID string
	Width        int
	Height       int
	FileSize     int
}

// Document is a file the bot uploaded or referenced, or a user sent.
type Document struct {
	FileID   string
	FileName string
	MimeType string
	Data     []byte
}

// Message is the fake's current view of one message in a chat.
type Message struct {
	ID      MessageID
	Chat    ChatID
	Thread  ThreadID
	IsTopic bool
	// FromBot is true for messages the bot sent; From is set for user ones.
	FromBot bool
	From    UserID
	Date    time.Time
	// EditDate is zero until the first successful edit.
	EditDate time.Time
	// Raw and ParseMode are the text exactly as last sent or edited; Text and
	// Entities are what Telegram would show after parsing.
	Raw       string
	ParseMode string
	Text      string
	Entities  []Entity
	// Keyboard is the inline keyboard; nil when the message has none.
	Keyboard  [][]Button
	EditCount int
	Deleted   bool
	// Pinned is true while the message is pinned (pinChatMessage).
	Pinned  bool
	ReplyTo MessageID
	// Document or Photo is set for media messages; Text and Entities then
	// hold the caption. Photo lists sizes smallest first, like Telegram.
	Document *Document
	Photo    []PhotoSize
	// Voice, Audio and VideoNote are set for those kinds of user message
	// (media_user.go); a caption is in Text.
	Voice     *Media
	Audio     *Media
	VideoNote *Media
	// MediaGroupID is shared by the messages of one album.
	MediaGroupID string
	// ForwardOrigin is set on forwarded messages.
	ForwardOrigin *ForwardOrigin
	// Quote is the part of the replied-to message a reply quotes.
	Quote string
	// PhotoData is the original bytes of a photo the bot sent.
	PhotoData []byte
}

// Media is a voice note, an audio file or a video note a user sent.
type Media struct {
	FileID   string
	FileName string // audio files only
	MimeType string // not set for video notes, as in Telegram
	Duration int    // seconds
	Data     []byte
}

// ForwardOrigin says where a forwarded message came from: Type is "user",
// "hidden_user", "chat" or "channel", with the matching fields set.
type ForwardOrigin struct {
	Type string
	Date time.Time
	// SenderUser for "user"; SenderUserName for "hidden_user".
	SenderUser     User
	SenderUserName string
	// Chat (its title and id) for "chat" and "channel".
	ChatTitle       string
	ChatID          ChatID
	ChatUsername    string
	AuthorSignature string
}

// HasButton reports whether the keyboard holds a button with exactly data.
func (m Message) HasButton(data string) bool {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.CallbackData == data {
				return true
			}
		}
	}
	return false
}

// Call is one HTTP request to the Bot API as the fake saw it.
type Call struct {
	Seq    int       // arrival order, from 1
	Time   time.Time // fake clock at arrival
	Method string    // as sent in the URL
	Chat   ChatID    // parsed chat_id, zero if absent or not numeric
	// Params holds every parameter as a string; JSON-valued ones keep their
	// JSON text. Files lists multipart file parts by field name.
	Params map[string]string
	Files  map[string]string
	// Outcome, filled when the response is written. Status is zero for a
	// dropped connection.
	Status      int
	Description string
	RetryAfter  int
	Done        time.Time // fake clock when the response was written, or the connection dropped
	arriveSeq   int       // position among arrivals and completions
	doneSeq     int
}

// OK reports whether the call succeeded.
func (c Call) OK() bool { return c.Status == 200 }

// CallbackAnswer is a successful answerCallbackQuery.
type CallbackAnswer struct {
	QueryID   CallbackQueryID
	Text      string
	ShowAlert bool
	URL       string
	Time      time.Time
}

// ChatAction is a successful sendChatAction.
type ChatAction struct {
	Chat   ChatID
	Thread ThreadID
	Action string
	Time   time.Time
}

// Draft is a successful sendMessageDraft.
type Draft struct {
	Chat     ChatID
	Thread   ThreadID
	DraftID  int64
	Text     string
	Entities []Entity
	Time     time.Time
}

// BotCommand is one entry of setMyCommands.
type BotCommand struct {
	Command     string
	Description string
}

// Update is a queued or delivered update in test-friendly form.
type Update struct {
	ID   UpdateID
	Kind string // "message", "edited_message" or "callback_query"
	// Message is set for "message" and "edited_message" (the message as
	// edited); for "callback_query" it is the message whose button was
	// pressed.
	Message Message
	// QueryID, From and Data are set for "callback_query".
	QueryID CallbackQueryID
	From    UserID
	Data    string
}

// ManualClock is a settable clock for [WithClock]. It starts at a fixed,
// whole-second instant so Unix-second dates in responses are predictable.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock reading start (or 2026-01-02 03:04:05 UTC
// when start is zero).
func NewManualClock(start time.Time) *ManualClock {
	if start.IsZero() {
		start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	return &ManualClock{now: start}
}

// Now returns the current fake time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ButtonData returns the callback data of the first button whose text
// contains label, or "" if there is none.
func (m Message) ButtonData(label string) string {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if strings.Contains(b.Text, label) {
				return b.CallbackData
			}
		}
	}
	return ""
}

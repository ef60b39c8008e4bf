package bridge

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/config"
)

// Which messages reach a chat. Private chats with an allowed user always
// do. A group or supergroup is served only when [telegram]
// allowed_chat_ids lists it: everyone in it sees Claude's answers, diffs
// and command output. In a listed group, [telegram] group_trigger decides
// which of an allowed user's messages are meant for the bot. A command
// addressed to another bot (/start@otherbot) is never ours. Everything
// refused is dropped without a reply and without a database write, and
// logged at most once a minute per chat and reason.

// admit reports whether m is a message for this bot from someone allowed,
// in a chat it serves. Refusals are logged, rate-limited.
func (b *Bridge) admit(m *models.Message) bool {
	var from int64
	if m.From != nil {
		from = m.From.ID
	}
	private := m.Chat.Type == models.ChatTypePrivate
	switch {
	case m.From == nil || !b.Config().Telegram.UserAllowed(from):
		if private {
			b.ignored.log(b, "stranger", m.Chat.ID, from, "ignoring a message from a user not allowed")
		} else {
			b.ignored.debug(b, "stranger", m.Chat.ID, from, "ignoring a group message from a user not allowed")
		}
		return false
	case !private && !slices.Contains(b.Config().Telegram.AllowedChatIDs, m.Chat.ID):
		b.ignored.log(b, "group", m.Chat.ID, from, "ignoring a group not listed in telegram.allowed_chat_ids (add its id there to serve it)")
		return false
	case addressedElsewhere(m, b.botUsername):
		b.ignored.debug(b, "other-bot", m.Chat.ID, from, "ignoring a command addressed to another bot")
		return false
	case !private && b.Config().Telegram.GroupTrigger == config.GroupTriggerMention && !b.addressedOrAlbum(m): // below
		b.ignored.debug(b, "chatter", m.Chat.ID, from, "ignoring a group message not addressed to the bot (group_trigger = \"mention\")")
		return false
	}
	return true
}

// entitiesOf returns a message's text (or caption) and its entities.
func entitiesOf(m *models.Message) (string, []models.MessageEntity) {
	if m.Text != "" {
		return m.Text, m.Entities
	}
	return m.Caption, m.CaptionEntities
}

// entityText slices an entity out of text by UTF-16 units, as Telegram
// counts them.
func entityText(units []uint16, e models.MessageEntity) string {
	if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
		return ""
	}
	return string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
}

// addressedElsewhere reports a command at the start of m that names
// another bot: "/start@otherbot".
func addressedElsewhere(m *models.Message, botUsername string) bool {
	text, ents := entitiesOf(m)
	units := utf16.Encode([]rune(text))
	for _, e := range ents {
		if e.Type != models.MessageEntityTypeBotCommand || e.Offset != 0 {
			continue
		}
		_, target, ok := strings.Cut(entityText(units, e), "@")
		return ok && botUsername != "" && !strings.EqualFold(target, botUsername)
	}
	return false
}

// addressedToUs reports whether a group message is meant for the bot: a
// command (for it or for no bot in particular), a mention of it, or a
// reply to one of its messages.
func addressedToUs(m *models.Message, botUsername string) bool {
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.IsBot && strings.EqualFold(r.From.Username, botUsername) {
		return true
	}
	text, ents := entitiesOf(m)
	units := utf16.Encode([]rune(text))
	for _, e := range ents {
		switch e.Type {
		case models.MessageEntityTypeBotCommand:
			if e.Offset == 0 {
				return true // addressedElsewhere has already refused /cmd@otherbot
			}
		case models.MessageEntityTypeMention:
			if botUsername != "" && strings.EqualFold(entityText(units, e), "@"+botUsername) {
				return true
			}
		}
	}
	return false
}

// ignoreLogEvery is how often one chat's refusals of one kind are logged.
const ignoreLogEvery = time.Minute

// ignoreLog rate-limits the refusal logs: a busy group the bot is not
// meant to serve must not flood the journal.
type ignoreLog struct {
	mu   sync.Mutex
	last map[ignoreKey]time.Time
}

type ignoreKey struct {
	reason string
	chat   int64
}

// due reports whether a refusal of this kind in this chat may be logged now.
func (l *ignoreLog) due(reason string, chat int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	k := ignoreKey{reason, chat}
	if t, ok := l.last[k]; ok && now.Sub(t) < ignoreLogEvery {
		return false
	}
	if l.last == nil || len(l.last) > 10000 {
		l.last = map[ignoreKey]time.Time{} // bounded: forget everything now and then
	}
	l.last[k] = now
	return true
}

func (l *ignoreLog) log(b *Bridge, reason string, chat, from int64, msg string) {
	if l.due(reason, chat) {
		b.log.Warn().Int64("user_id", from).Int64("chat_id", chat).Str("reason", reason).Msg(msg)
	}
}

func (l *ignoreLog) debug(b *Bridge, reason string, chat, from int64, msg string) {
	if l.due(reason, chat) {
		b.log.Debug().Int64("user_id", from).Int64("chat_id", chat).Str("reason", reason).Msg(msg)
	}
}

// dropQuietly marks a refused update handled in memory only: no reply and
// no database write, so strangers (or a chatty group) cost nothing. The
// offset is persisted with the next update handled normally. It returns
// true so routeMessage's caller does not finish the update again.
func (b *Bridge) dropQuietly(updateID int64) bool {
	b.e.SkipUpdate(updateID)
	return true
}

// callbackChat is the chat a button press came from; 0 when Telegram did
// not say (inline-mode messages, which the bot never sends).
func callbackChat(cq *models.CallbackQuery) int64 {
	switch {
	case cq.Message.Message != nil:
		return cq.Message.Message.Chat.ID
	case cq.Message.InaccessibleMessage != nil:
		return cq.Message.InaccessibleMessage.Chat.ID
	}
	return 0
}

// albumMemory remembers the albums whose first part addressed the bot in a
// group where only messages addressed to it count (group_trigger =
// "mention"): the caption, and so the mention, is on the first part only,
// and the other parts belong to it.
type albumMemory struct {
	mu   sync.Mutex
	seen map[albumKey]time.Time
}

type albumKey struct {
	chat  int64
	group string
}

// albumMemoryFor is how long an album's parts keep coming.
const albumMemoryFor = time.Minute

// addressedOrAlbum reports whether a group message is addressed to the bot,
// or is a later part of an album whose first part was.
func (b *Bridge) addressedOrAlbum(m *models.Message) bool {
	addressed := addressedToUs(m, b.botUsername)
	if m.MediaGroupID == "" {
		return addressed
	}
	k := albumKey{m.Chat.ID, m.MediaGroupID}
	mem := &b.albums
	mem.mu.Lock()
	defer mem.mu.Unlock()
	now := time.Now()
	for key, at := range mem.seen {
		if now.Sub(at) > albumMemoryFor {
			delete(mem.seen, key)
		}
	}
	if addressed {
		if mem.seen == nil {
			mem.seen = map[albumKey]time.Time{}
		}
		mem.seen[k] = now
		return true
	}
	_, ok := mem.seen[k]
	return ok
}

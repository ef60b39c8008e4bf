package state

import "strconv"

// ChatID is a Telegram chat id. Supergroups and channels are negative.
type ChatID int64

// ThreadID is a forum topic (message_thread_id); 0 means "no topic".
type ThreadID int

// UserID is a Telegram user id.
type UserID int64

// MessageID is a Telegram message id. Ids are unique within a chat, across
// all of its topics.
type MessageID int

// ChatKey names one conversation: a chat, or one forum topic within it. Each
// key owns one CLI session.
type ChatKey struct {
	Chat   ChatID
	Thread ThreadID
}

// String renders the key as "123" or, inside a forum topic, "123/7". It is
// meant for logs and error messages.
func (k ChatKey) String() string {
	s := strconv.FormatInt(int64(k.Chat), 10)
	if k.Thread == 0 {
		return s
	}
	return s + "/" + strconv.Itoa(int(k.Thread))
}

package telegramtest

import (
	"context"
	"slices"
	"strings"
)

// ForumTopic is a topic of a forum as the fake knows it: made by
// createForumTopic, or by [Server.AddTopic] (which gives it no name).
type ForumTopic struct {
	Chat              ChatID
	ThreadID          ThreadID
	Name              string
	IconColor         int
	IconCustomEmojiID string
}

// Limits and choices of createForumTopic, from the Bot API reference.
const MaxTopicNameLen = 128

// TopicIconColors are the six colors a topic's icon may have.
var TopicIconColors = []int{0x6FB9F0, 0xFFD67E, 0xCB86DB, 0x8EEE98, 0xFF93B2, 0xFB6F5F}

type wireForumTopic struct {
	MessageThreadID   int    `json:"message_thread_id"`
	Name              string `json:"name"`
	IconColor         int    `json:"icon_color"`
	IconCustomEmojiID string `json:"icon_custom_emoji_id,omitempty"`
}

// createForumTopic makes a topic in a forum supergroup where the bot is
// allowed to manage topics ([Chat.BotCanManageTopics]). The topic's id is
// the id of its creation message, taken from the chat's message ids like
// any message. Telegram's wording for a missing or too long name is not
// documented; the fake uses the MTProto error names.
func (s *Server) createForumTopic(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	if !c.IsForum {
		return nil, badRequest("the chat is not a forum")
	}
	if !c.BotCanManageTopics {
		return nil, badRequest("not enough rights to create a topic")
	}
	name := p.str("name")
	switch {
	case strings.TrimSpace(name) == "":
		return nil, badRequest("TOPIC_TITLE_EMPTY")
	case utf16Len(name) > MaxTopicNameLen:
		return nil, badRequest("TOPIC_TITLE_TOO_LONG")
	}
	color := TopicIconColors[0]
	if n, ok, err := p.int64("icon_color"); err != nil || ok && !slices.Contains(TopicIconColors, int(n)) {
		return nil, badRequest("TOPIC_ICON_COLOR_INVALID")
	} else if ok {
		color = int(n)
	}
	if aerr := s.checkFloodLocked(c, "createForumTopic"); aerr != nil {
		return nil, aerr
	}
	if c.nextID <= 1 {
		c.nextID = 2 // 1 is General's
	}
	th := ThreadID(c.nextID)
	c.nextID++
	c.topics[th] = true
	c.Topics = append(c.Topics, th)
	t := ForumTopic{Chat: c.ID, ThreadID: th, Name: name, IconColor: color, IconCustomEmojiID: p.str("icon_custom_emoji_id")}
	s.forumTopics = append(s.forumTopics, t)
	s.bumpLocked()
	return wireForumTopic{MessageThreadID: int(th), Name: t.Name, IconColor: t.IconColor, IconCustomEmojiID: t.IconCustomEmojiID}, nil
}

// Topics is shorthand for Snapshot().Topics.
func (s *Server) Topics() []ForumTopic { return s.Snapshot().Topics }

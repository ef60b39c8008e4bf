package telegramtest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Snapshot is a deep copy of the fake's state at one instant; tests may keep
// and inspect it freely.
type Snapshot struct {
	Chats           map[ChatID][]Message // every message, deleted ones included, by id
	Calls           []Call
	CallbackAnswers []CallbackAnswer
	ChatActions     []ChatAction
	Drafts          []Draft      // every accepted sendMessageDraft
	ShownDrafts     []Draft      // what the user sees now, one per chat or topic at most
	Commands        []BotCommand // default scope, no language
	// Pending are queued updates not yet confirmed by an offset; HandedOut
	// lists every update id getUpdates returned, repeats included;
	// ConfirmedOffset is the highest offset a poll has confirmed. Updates is
	// every update ever queued, confirmed ones included, in id order.
	Pending         []Update
	Updates         []Update
	HandedOut       []UpdateID
	ConfirmedOffset UpdateID
	WebhookURL      string
	// LongPolling is true while a getUpdates call is registered and waiting.
	LongPolling bool
	// Topics are the forum topics createForumTopic made, in order.
	Topics []ForumTopic
}

// Messages returns a chat's messages in id order, deleted ones included.
func (sn *Snapshot) Messages(chat ChatID) []Message { return sn.Chats[chat] }

// Message returns one message by id.
func (sn *Snapshot) Message(chat ChatID, id MessageID) (Message, bool) {
	for _, m := range sn.Chats[chat] {
		if m.ID == id {
			return m, true
		}
	}
	return Message{}, false
}

// UpdateOf returns the id of the "message" update that carried a user
// message, 0 if none did.
func (sn *Snapshot) UpdateOf(chat ChatID, msg MessageID) UpdateID {
	for _, u := range sn.Updates {
		if u.Kind == "message" && u.Message.Chat == chat && u.Message.ID == msg {
			return u.ID
		}
	}
	return 0
}

// BotMessages returns the bot's messages in a chat that are not deleted.
func (sn *Snapshot) BotMessages(chat ChatID) []Message {
	var out []Message
	for _, m := range sn.Chats[chat] {
		if m.FromBot && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// Documents returns every document message the bot sent, across chats, in
// chat then id order. The caption is in Text.
func (sn *Snapshot) Documents() []Message {
	ids := make([]ChatID, 0, len(sn.Chats))
	for id := range sn.Chats {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []Message
	for _, id := range ids {
		for _, m := range sn.Chats[id] {
			if m.FromBot && m.Document != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// CallsTo returns the calls that named chat, in arrival order.
func (sn *Snapshot) CallsTo(chat ChatID) []Call {
	var out []Call
	for _, c := range sn.Calls {
		if c.Chat == chat {
			out = append(out, c)
		}
	}
	return out
}

// CallsOf returns the calls of one method (exact name), in arrival order.
func (sn *Snapshot) CallsOf(method string) []Call {
	var out []Call
	for _, c := range sn.Calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Snapshot copies the current state.
func (s *Server) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

func (s *Server) snapshotLocked() *Snapshot {
	sn := &Snapshot{
		Chats:           make(map[ChatID][]Message, len(s.chats)),
		Calls:           make([]Call, len(s.calls)),
		CallbackAnswers: append([]CallbackAnswer(nil), s.answers...),
		ChatActions:     append([]ChatAction(nil), s.actions...),
		Drafts:          append([]Draft(nil), s.drafts...),
		ShownDrafts:     s.shownDraftsLocked(),
		Commands:        append([]BotCommand(nil), s.commands[commandKey{scope: "default"}]...),
		HandedOut:       append([]UpdateID(nil), s.handedOut...),
		ConfirmedOffset: s.confirmed,
		WebhookURL:      s.webhookURL,
		LongPolling:     s.poll != nil,
		Topics:          append([]ForumTopic(nil), s.forumTopics...),
	}
	for id, c := range s.chats {
		msgs := make([]Message, 0, len(c.order))
		for _, mid := range c.order {
			msgs = append(msgs, c.messages[mid].copy())
		}
		sn.Chats[id] = msgs
	}
	for i, c := range s.calls {
		sn.Calls[i] = c
		sn.Calls[i].Params = copyMap(c.Params)
		sn.Calls[i].Files = copyMap(c.Files)
	}
	for _, q := range s.queue {
		sn.Pending = append(sn.Pending, q.obs)
	}
	sn.Updates = append([]Update(nil), s.queued...)
	return sn
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Messages is shorthand for Snapshot().Messages(chat).
func (s *Server) Messages(chat ChatID) []Message { return s.Snapshot().Messages(chat) }

// Message is shorthand for Snapshot().Message(chat, id).
func (s *Server) Message(chat ChatID, id MessageID) (Message, bool) {
	return s.Snapshot().Message(chat, id)
}

// Calls is shorthand for Snapshot().Calls.
func (s *Server) Calls() []Call { return s.Snapshot().Calls }

// CallsTo is shorthand for Snapshot().CallsTo(chat).
func (s *Server) CallsTo(chat ChatID) []Call { return s.Snapshot().CallsTo(chat) }

// CallbackAnswers is shorthand for Snapshot().CallbackAnswers.
func (s *Server) CallbackAnswers() []CallbackAnswer { return s.Snapshot().CallbackAnswers }

// ChatActions is shorthand for Snapshot().ChatActions.
func (s *Server) ChatActions() []ChatAction { return s.Snapshot().ChatActions }

// Drafts is shorthand for Snapshot().Drafts.
func (s *Server) Drafts() []Draft { return s.Snapshot().Drafts }

// Documents is shorthand for Snapshot().Documents().
func (s *Server) Documents() []Message { return s.Snapshot().Documents() }

// Commands is shorthand for Snapshot().Commands.
func (s *Server) Commands() []BotCommand { return s.Snapshot().Commands }

// Await blocks until pred holds for a snapshot, the context ends, or the
// server closes. It re-evaluates pred on every state change (a broadcast
// channel, never polling with sleeps).
func (s *Server) Await(ctx context.Context, pred func(*Snapshot) bool) (*Snapshot, error) {
	for {
		s.mu.Lock()
		sn, ch := s.snapshotLocked(), s.changed
		s.mu.Unlock()
		if pred(sn) {
			return sn, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return sn, fmt.Errorf("wait for fake Telegram state: %w", ctx.Err())
		case <-s.done:
			return sn, fmt.Errorf("wait for fake Telegram state: server closed")
		}
	}
}

// WaitFor is [Server.Await] with a timeout that fails the test; call it from
// the test goroutine. Pick generous timeouts: they only bound a failure.
func (s *Server) WaitFor(timeout time.Duration, pred func(*Snapshot) bool) *Snapshot {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sn, err := s.Await(ctx, pred)
	if err != nil {
		s.t.Fatalf("telegramtest: %v after %v; %d calls, last: %s", err, timeout, len(sn.Calls), lastCall(sn))
	}
	return sn
}

func lastCall(sn *Snapshot) string {
	if len(sn.Calls) == 0 {
		return "none"
	}
	c := sn.Calls[len(sn.Calls)-1]
	return fmt.Sprintf("%s chat=%d status=%d %q", c.Method, c.Chat, c.Status, c.Description)
}

// Dump renders a chat's messages one per line, for test failure messages.
func (sn *Snapshot) Dump(chat ChatID) string {
	var b strings.Builder
	for _, m := range sn.Messages(chat) {
		fmt.Fprintf(&b, "\n#%d bot=%v reply=%d edits=%d kb=%v: %q", m.ID, m.FromBot, m.ReplyTo, m.EditCount, m.Keyboard, m.Text)
	}
	return b.String()
}

// WaitForBotMessage waits until a bot message in chat satisfies pred and
// returns it; on timeout it fails the test, naming what was awaited and
// dumping the chat. Call it from the test goroutine.
func (s *Server) WaitForBotMessage(timeout time.Duration, chat ChatID, what string, pred func(Message) bool) Message {
	s.t.Helper()
	var found Message
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sn, err := s.Await(ctx, func(sn *Snapshot) bool {
		for _, m := range sn.BotMessages(chat) {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		s.t.Fatalf("telegramtest: no %s: %v; chat:%s", what, err, sn.Dump(chat))
	}
	return found
}

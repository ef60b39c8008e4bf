package chat

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

// wedgedAfter is how long a chat's mailbox may go unhandled before
// ChatsHealthy reports the chat: its actor is wedged.
const wedgedAfter = 2 * time.Minute

// WedgedChat is one chat ChatsHealthy found wedged: Since is when its
// oldest unhandled item was posted.
type WedgedChat struct {
	Key   state.ChatKey
	Since time.Time
}

// WedgedError is ChatsHealthy's finding. Its two texts go to two
// audiences: Error names the chats, for the operator's log; Public says
// only how many and for how long, because /healthz shows it to whoever
// reaches the HTTP listener, which also serves public webhooks, and a
// chat's key is a Telegram chat id (a user's id, in a private chat).
type WedgedError struct {
	Chats []WedgedChat // the longest wedged first
	At    time.Time    // when it was judged
}

// Error names every wedged chat and since when.
func (e *WedgedError) Error() string {
	parts := make([]string, len(e.Chats))
	for i, c := range e.Chats {
		parts[i] = fmt.Sprintf("chat %s has not handled its mailbox since %s", c.Key, c.Since.Format(time.RFC3339))
	}
	return strings.Join(parts, "; ")
}

// Public is the finding without the chats' keys: how many, and how long
// the longest has waited.
func (e *WedgedError) Public() string {
	if len(e.Chats) == 0 {
		return "a chat has not handled its mailbox"
	}
	longest := e.At.Sub(e.Chats[0].Since).Round(time.Second)
	if len(e.Chats) == 1 {
		return fmt.Sprintf("a chat has not handled its mailbox for %s", longest)
	}
	return fmt.Sprintf("%d chats have not handled their mailboxes, the longest for %s", len(e.Chats), longest)
}

// wedged is the *WedgedError for the chats stalled at now, nil when none
// is. The caller holds b.mu.
func (b *Engine) wedged(now time.Time) error {
	var found []WedgedChat
	for key, c := range b.chats {
		if since := c.stalledSince(); !since.IsZero() && now.Sub(since) > wedgedAfter {
			found = append(found, WedgedChat{Key: key, Since: since})
		}
	}
	if len(found) == 0 {
		return nil
	}
	// Oldest first (Public reads the longest wedged from the first), then
	// by key, so the order is the same at every probe.
	slices.SortFunc(found, func(a, b WedgedChat) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.Key.String(), b.Key.String())
	})
	return &WedgedError{Chats: found, At: now}
}

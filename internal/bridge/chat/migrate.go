package chat

import (
	"context"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
)

// When a group becomes a supergroup, Telegram gives it a new chat id and
// says so twice: a service message in the old group (migrate_to_chat_id)
// and one in the new supergroup (migrate_from_chat_id). Either moves the
// chat's session, settings and pending state to the new id, and re-keys a
// live chat actor in place, so the conversation goes on in the supergroup.
// Whether the new id may be served is still the allow-list's call.

// migrateChat moves everything kept for chat from to chat to.
func (b *Engine) migrateChat(ctx context.Context, from, to state.ChatID) {
	if err := b.store.MigrateChat(ctx, from, to); err != nil {
		b.log.Error().Err(err).Int64("from", int64(from)).Int64("to", int64(to)).Msg("move a migrated group's state")
	}
	b.mu.Lock()
	moved := 0
	for key, c := range b.chats {
		if key.Chat != from {
			continue
		}
		next := state.ChatKey{Chat: to, Thread: key.Thread}
		if _, taken := b.chats[next]; taken {
			continue // the supergroup already has its own actor; the old one idles out
		}
		delete(b.chats, key)
		b.chats[next] = c
		for tok, ref := range b.buttons {
			if ref.key == key {
				b.buttons[tok] = buttonRef{key: next}
			}
		}
		c.post(item{fn: func() { c.rekey(next) }})
		moved++
	}
	b.mu.Unlock()
	b.log.Info().Int64("from", int64(from)).Int64("to", int64(to)).Int("live_chats", moved).
		Msg("group became a supergroup; its sessions moved to the new chat id")
}

// rekey points the actor at its chat's new id: everything it sends from now
// on goes to the supergroup.
func (c *Chat) rekey(key state.ChatKey) {
	c.key = key
	c.outKey = outbox.ChatKey{Chat: int64(key.Chat), Thread: int(key.Thread)}
	c.rec.Key = key
	log := c.logger().With().Str("chat", key.String()).Logger()
	c.log.Store(&log)
}

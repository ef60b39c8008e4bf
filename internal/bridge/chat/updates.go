package chat

import (
	"context"

	"github.com/go-telegram/bot/models"
	"github.com/untether/untether/internal/bridge/state"
)

// finishUpdate confirms update id: its kept copy goes, and the offset
// moves on once every update below it is finished too.
func (b *Engine) finishUpdate(id int64) {
	ctx := context.WithoutCancel(b.runCtx)
	if err := b.store.ForgetDeferredUpdate(ctx, id); err != nil {
		b.log.Error().Err(err).Int64("update_id", id).Msg("forget a handled message")
	}
	if err := b.offsets.Finish(ctx, id); err != nil {
		b.log.Error().Err(err).Int64("update_id", id).Msg("persist update offset")
	}
}

// ChatKeyOf returns the actor key of a message: the chat, plus the forum
// topic only for real topic messages (a General-topic message carries a
// thread id that is not a topic).
func ChatKeyOf(m *models.Message) state.ChatKey {
	k := state.ChatKey{Chat: state.ChatID(m.Chat.ID)}
	if m.IsTopicMessage {
		k.Thread = state.ThreadID(m.MessageThreadID)
	}
	return k
}

// chatServed reports whether untether may still talk in a chat: a
// private chat's user must be allowed, a group must be. What the previous
// run left to send (reconcile.go), schedules and retries (the schedules module) are held to it.
func (b *Engine) chatServed(key state.ChatKey) bool {
	if key.Chat > 0 {
		return b.Config().Telegram.UserAllowed(int64(key.Chat))
	}
	return b.Config().Telegram.ChatAllowed(int64(key.Chat))
}

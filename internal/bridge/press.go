package bridge

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
)

// routeCallback checks the press, then hands its work to the chat. Every
// kind of button goes through the same checks, in this order: the user
// and the chat are allowed, the token names something, and the chat (and
// forum topic) the press came from is the one it belongs to. Telegram
// takes the callback data from the client, which can send any, so a token
// copied from another chat must not act there.
func (b *Bridge) routeCallback(ctx context.Context, updateID int64, cq *models.CallbackQuery) bool {
	if !b.Config().Telegram.UserAllowed(cq.From.ID) || !b.Config().Telegram.ChatAllowed(callbackChat(cq)) {
		return b.refuseStrangerPress(updateID, cq)
	}
	rt, refusal := b.e.ResolvePress(ctx, cq)
	if refusal != "" {
		b.e.AnswerCallback(cq.ID, refusal, true)
		return false
	}
	if from, ok := chat.PressKey(cq); !ok || from != rt.Key {
		b.ignored.log(b, "foreign-press", callbackChat(cq), cq.From.ID,
			"refusing a button press from a chat or topic the button does not belong to (a copied or forged callback)")
		b.e.AnswerCallback(cq.ID, chat.ExpiredText, true)
		return false
	}
	return rt.Deliver(updateID)
}

// refuseStrangerPress drops a press from a user (or in a chat) the bot
// does not serve, like their messages: no database write, the log
// rate-limited per chat, and the "not allowed" answer at most once a
// minute per user, so a stream of presses costs neither log lines nor
// Bot API calls.
func (b *Bridge) refuseStrangerPress(updateID int64, cq *models.CallbackQuery) bool {
	chat := callbackChat(cq)
	if !b.Config().Telegram.UserAllowed(cq.From.ID) {
		b.ignored.log(b, "stranger-press", chat, cq.From.ID, "ignoring a button press from a user not allowed")
	} else {
		b.ignored.log(b, "group-press", chat, cq.From.ID, "ignoring a button press in a group not listed in telegram.allowed_chat_ids")
	}
	if b.ignored.due("stranger-press-answer", cq.From.ID) {
		b.e.AnswerCallback(cq.ID, "You are not allowed to use this bot.", true)
	}
	return b.dropQuietly(updateID)
}

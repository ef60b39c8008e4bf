package chat

import (
	"context"
	"fmt"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
)

// Doors for the one-tap controls (the control panel, /login): running a
// command as if it were typed, deleting a message of the chat, pinning.

// RunCommand runs the registered command name with args as if m had been
// typed ("/name args"), so a button can do exactly what the command does,
// under the same rules. It reports false, running nothing, for a name no
// one registered.
func (c *Chat) RunCommand(name, args string, m *models.Message) bool {
	cmd, ok := c.b.reg.command(name)
	if !ok {
		return false
	}
	cmd.Run(c, Invocation{Args: args, Msg: m})
	return true
}

// DeleteMessage deletes message id of the chat, the bot's own or (in a
// private chat) one the user sent, through the outbox. Telegram refuses
// messages older than 48 hours; the returned Pending says how it went.
func (c *Chat) DeleteMessage(id int) *outbox.Pending {
	return c.b.out.Delete(c.ctx(), c.b.out.Adopt(c.outKey, outbox.MessageID(id)), outbox.High)
}

// PinMessage pins message id of the chat without a notification (pin
// false: unpins it). It calls Telegram at once, so it runs off the actor
// (Offload). In a group the bot needs the right to pin; Telegram's
// refusal comes back as the error, which never names the bot token.
func (c *Chat) PinMessage(ctx context.Context, id int, pin bool) error {
	var err error
	if pin {
		_, err = c.b.bot.PinChatMessage(ctx, &bot.PinChatMessageParams{ChatID: int64(c.key.Chat), MessageID: id, DisableNotification: true})
	} else {
		_, err = c.b.bot.UnpinChatMessage(ctx, &bot.UnpinChatMessageParams{ChatID: int64(c.key.Chat), MessageID: id})
	}
	if err != nil {
		what := "pin"
		if !pin {
			what = "unpin"
		}
		return fmt.Errorf("%s message %d: %w", what, id, RedactErr(err, c.b.Config()))
	}
	return nil
}

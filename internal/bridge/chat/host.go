package chat

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-telegram/bot"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/durable"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
)

// Host is the engine as a module sees it, handed to the module when it is
// built (Options.Modules): the live configuration, the clock users
// schedule and budget by, the state store, and the chats. A module keeps
// what it needs of it; per-chat work goes through the *Chat its hooks get.
type Host struct{ e *Engine }

// Config is the live configuration (a reload swaps it).
func (h *Host) Config() *config.Config { return h.e.Config() }

// Now is the Clock's time: what schedules, limit retries, budgets and
// /usage go by.
func (h *Host) Now() time.Time { return h.e.now() }

// Clock is the clock Now reads.
func (h *Host) Clock() Clock { return h.e.clock }

// Store is the state store; a write the disk refuses is kept and done
// again later (durable.Writes). A module declares the part it uses as an
// interface of its own.
func (h *Host) Store() *durable.Writes { return h.e.store }

// Logger is the daemon's logger.
func (h *Host) Logger() *zerolog.Logger { return &h.e.log }

// Chat is the actor of key, started if needed; nil while untether drains
// and key has none.
func (h *Host) Chat(key state.ChatKey) *Chat { return h.e.chat(key, key.Chat < 0) }

// ChatServed reports whether untether may still talk in a chat: a
// private chat's user must be allowed, a group must be listed.
func (h *Host) ChatServed(key state.ChatKey) bool { return h.e.chatServed(key) }

// UserAllowed reports whether a Telegram user may use the bot.
func (h *Host) UserAllowed(id state.UserID) bool { return h.e.Config().Telegram.UserAllowed(int64(id)) }

// InheritEnv is the daemon's environment; only its allow-listed part
// reaches what untether runs (runner.BuildEnv).
func (h *Host) InheritEnv() []string { return h.e.opts.InheritEnv }

// CreateForumTopic makes a topic called name in forum chat, and returns
// its thread id. An error never names the bot token.
func (h *Host) CreateForumTopic(ctx context.Context, chat int64, name string) (int, error) {
	topic, err := h.e.bot.CreateForumTopic(ctx, &bot.CreateForumTopicParams{ChatID: chat, Name: name})
	if err != nil {
		return 0, fmt.Errorf("create forum topic: %w", RedactErr(err, h.e.Config()))
	}
	return topic.MessageThreadID, nil
}

// BindTopic stores a new forum topic's project and branch before anyone
// writes there, so its first message starts in them.
func (h *Host) BindTopic(key state.ChatKey, pl Place) error { return h.e.bindTopic(key, pl) }

// SendTo sends content to a chat from any goroutine: one that may have no
// actor (a new topic), or from offloaded work whose notice must go before
// what the chat sends next (a transcript before the answer).
func (h *Host) SendTo(ctx context.Context, key state.ChatKey, prio outbox.Priority, content outbox.Content, opts outbox.SendOptions) *outbox.Message {
	return h.e.out.Send(ctx, outKey(key), prio, content, opts)
}

// BotUsername is the bot's Telegram username, without the @.
func (h *Host) BotUsername() string { return h.e.botUsername }

// Download opens a file a user sent, by its Telegram file id. The limit is
// checked against the size Telegram reports; the caller still bounds what
// it reads. An error never names the bot token.
func (h *Host) Download(ctx context.Context, fileID string, limitMB int) (io.ReadCloser, error) {
	return h.e.download(ctx, fileID, limitMB)
}

// OwnDirs reports refusals of untether's own directories once, whichever
// module met them.
func (h *Host) OwnDirs() *owndir.Reports { return h.e.ownDirs }

// Redact removes the bot token from an error's text (go-telegram/bot puts
// it in request URLs, which url.Error prints).
func (h *Host) Redact(err error) error { return RedactErr(err, h.e.Config()) }

package chat

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/durable"
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
func (h *Host) UserAllowed(id state.UserID) bool { return h.e.allowedUser(int64(id)) }

package bridge

import (
	"context"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/modules/files"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// The full-stack tests' view inside the bridge: the engine's test surface
// (chat/testsurface.go) and the modules' test hooks.

// ButtonKinds is every kind of button, as the first byte of its callback
// data: the list the press router accepts.
func ButtonKinds() []byte {
	return chat.ButtonKinds(func(h *chat.Host) []chat.Module { return modules(h, &served{}) })
}

// HoldZips makes every /get zip of the test wait, before it opens each
// file, until the returned release is called: a zip still being made.
func HoldZips() (release func()) { return files.HoldZips() }

// Crash abandons the bridge the way a SIGKILL of the daemon would.
func (b *Bridge) Crash() { b.e.Crash() }

// ChatPID is the live CLI pid of a chat, 0 if none.
func (b *Bridge) ChatPID(key state.ChatKey) int { return b.e.ChatPID(key) }

// BlockChat makes a chat's actor busy until release is called.
func (b *Bridge) BlockChat(key state.ChatKey) (release func()) { return b.e.BlockChat(key) }

// MailboxUpdates is the number of Telegram updates waiting in a chat's
// mailbox.
func (b *Bridge) MailboxUpdates(key state.ChatKey) int { return b.e.MailboxUpdates(key) }

// StalledFor is how long, at now, the chat's oldest unhandled mailbox item
// has waited.
func (b *Bridge) StalledFor(key state.ChatKey, now time.Time) time.Duration {
	return b.e.StalledFor(key, now)
}

// AgeMailbox makes a chat's oldest unhandled mailbox item d older.
func (b *Bridge) AgeMailbox(key state.ChatKey, d time.Duration) { b.e.AgeMailbox(key, d) }

// ChatsHealthy is Healthy's chat half.
func (b *Bridge) ChatsHealthy(now time.Time) error { return b.e.ChatsHealthy(now) }

// ChatState is the state of a chat's CLI session, "" if it has none.
func (b *Bridge) ChatState(key state.ChatKey) string { return b.e.ChatState(key) }

// ChatProcessState is the state of a chat's session, read off the actor.
func (b *Bridge) ChatProcessState(key state.ChatKey) runner.State { return b.e.ChatProcessState(key) }

// CloseChatProcess closes a chat's CLI the way idle eviction does.
func (b *Bridge) CloseChatProcess(ctx context.Context, key state.ChatKey) <-chan error {
	return b.e.CloseChatProcess(ctx, key)
}

// OwnButton makes a live button of kind that belongs to key.
func (b *Bridge) OwnButton(kind byte, key state.ChatKey) (string, error) {
	return b.e.OwnButton(kind, key)
}

// Draining reports whether Shutdown began.
func (b *Bridge) Draining() bool { return b.e.Draining() }

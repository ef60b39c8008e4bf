package bridge

import (
	"context"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/config"
)

// Bridge connects Telegram chats to Claude sessions.
type Bridge struct {
	*chat.Engine
}

// Options are the bridge's dependencies.
type Options = chat.Options

// Clock is the time schedules, retries after a limit and budgets go by.
type Clock = chat.Clock

// ErrFatalTelegram reports a Telegram condition the daemon cannot recover
// from by itself: an invalid token, or another poller on the same token.
var ErrFatalTelegram = chat.ErrFatalTelegram

// New prepares a bridge; Run starts it.
func New(opts Options) (*Bridge, error) {
	opts.Modules = modules
	e, err := chat.New(opts)
	if err != nil {
		return nil, err
	}
	return &Bridge{Engine: e}, nil
}

// CheckToken calls getMe with the configured token and returns the bot's
// username (untether check --online).
func CheckToken(ctx context.Context, cfg *config.Config) (string, error) {
	return chat.CheckToken(ctx, cfg)
}

package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/config"
)

// ErrFatalTelegram reports a Telegram condition the daemon cannot recover
// from by itself: an invalid token, or another poller on the same token.
var ErrFatalTelegram = errors.New("fatal Telegram error")

// Options are the bridge's dependencies.
type Options = chat.Options

// Clock is the time schedules, retries after a limit and budgets go by.
type Clock = chat.Clock

// Stats is a live snapshot for sd_notify STATUS= and /status.
type Stats = chat.Stats

// Bridge connects Telegram chats to Claude sessions: it polls Telegram,
// admits and routes each update to its chat in the engine (package chat),
// and reports whether it makes progress.
type Bridge struct {
	e   *chat.Engine
	log zerolog.Logger

	loop        *ingress.Loop // the update guard and the update loop's liveness
	client      *http.Client  // Telegram's: the Bot API and file downloads
	tg          *bot.Bot
	botUsername string
	fatal       chan error
	ignored     ignoreLog              // rate limit of refusal logs (admit.go)
	conflict    ingress.ConflictStreak // 409s in a row (conflict.go)
	albums      albumMemory            // albums addressed to the bot in groups (admit.go)
	served      served                 // modules served from outside the engine (service.go)
}

// New prepares a bridge with the modules (modules.go); Run starts it.
func New(opts Options) (*Bridge, error) {
	b := &Bridge{log: opts.Logger, fatal: make(chan error, 1), loop: ingress.NewLoop(opts.Logger, opts.Ready)}
	opts.Modules = func(h *chat.Host) []chat.Module { return modules(h, &b.served) }
	b.observe(&opts) // service.go
	e, err := chat.New(opts)
	if err != nil {
		return nil, err
	}
	b.e = e
	return b, nil
}

// Config returns the live configuration.
func (b *Bridge) Config() *config.Config { return b.e.Config() }

// Reload swaps in a new configuration; only the safe subset (allow-lists,
// progress settings, timeouts) takes effect for running chats.
func (b *Bridge) Reload(c *config.Config) { b.e.Reload(c) }

// Stats counts live chats, running turns and pending approvals.
func (b *Bridge) Stats() Stats { return b.e.Stats() }

// Shutdown drains: no new turns start (messages get a notice and are left
// for the next start), running turns may finish until ctx ends (their
// answers are delivered; call it while Run still polls, so buttons keep
// working), then they are interrupted, the CLIs closed and the outbox
// flushed.
func (b *Bridge) Shutdown(ctx context.Context) error { return b.e.Shutdown(ctx) }

// Run polls Telegram and serves chats until ctx ends or a fatal Telegram
// condition stops it (ErrFatalTelegram).
func (b *Bridge) Run(ctx context.Context) error {
	cfg := b.Config()
	offset, handled, err := b.e.Open(ctx)
	if err != nil {
		return fmt.Errorf("run bridge: %w", err)
	}
	poll := cfg.Telegram.PollTimeout.Std()
	client := &http.Client{Timeout: poll + 15*time.Second}
	if opts := b.e.Options(); opts.HTTPClient != nil {
		c := *opts.HTTPClient
		client = &c
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client.Transport = b.loop.Transport(base)
	b.client = client
	b.tg, err = bot.New(cfg.Telegram.BotToken.Reveal(),
		bot.WithServerURL(cfg.Telegram.APIURL),
		bot.WithHTTPClient(poll, client),
		bot.WithSkipGetMe(),
		bot.WithNotAsyncHandlers(),
		bot.WithWorkers(1),
		bot.WithDefaultHandler(b.onUpdate),
		bot.WithErrorsHandler(b.pollError),
		// Edits are asked for so that an edited message is answered (the phone module).
		bot.WithAllowedUpdates(bot.AllowedUpdates{models.AllowedUpdateMessage, models.AllowedUpdateEditedMessage, models.AllowedUpdateCallbackQuery}),
		bot.WithInitialOffset(offset),
	)
	if err != nil {
		return fmt.Errorf("create Telegram client: %w", chat.RedactErr(err, cfg))
	}
	me, err := b.tg.GetMe(ctx)
	if err != nil {
		if errors.Is(err, bot.ErrorUnauthorized) || errors.Is(err, bot.ErrorNotFound) {
			return fmt.Errorf("%w: the bot token was refused (getMe): %v", ErrFatalTelegram, chat.RedactErr(err, cfg))
		}
		return fmt.Errorf("reach Telegram (getMe): %w", chat.RedactErr(err, cfg))
	}
	b.botUsername = me.Username
	b.log.Info().Str("bot", me.Username).Int64("offset", offset).Int("handled_above_offset", handled).Msg("connected to Telegram")
	b.loop.SetCalls(b.e.Connect(b.tg, client, me.Username))

	defer b.e.Start(ctx)()
	b.replayDeferred(ctx) // route.go
	defer b.e.StartModules(ctx)()

	b.probeUpdates(ctx, offset)
	defer b.registerCommands(ctx)()
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		b.tg.Start(pollCtx)
	}()
	select {
	case <-ctx.Done():
		err = nil
	case err = <-b.fatal:
	}
	stopPoll()
	<-polled
	return err
}

// registerCommands fills Telegram's command menu (setMyCommands) beside
// the long poll: nothing the poll does depends on it, and it would add a
// round trip to every start before the first poll. The returned function
// stops it if it still runs and waits for it.
func (b *Bridge) registerCommands(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := b.tg.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: b.e.BotCommands()})
		if err != nil && ctx.Err() == nil {
			b.log.Warn().Err(chat.RedactErr(err, b.Config())).Msg("register bot commands")
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// CheckToken calls getMe with the configured token and returns the bot's
// username (untether check --online).
func CheckToken(ctx context.Context, cfg *config.Config) (string, error) {
	tg, err := bot.New(cfg.Telegram.BotToken.Reveal(), bot.WithServerURL(cfg.Telegram.APIURL), bot.WithSkipGetMe())
	if err != nil {
		return "", chat.RedactErr(err, cfg)
	}
	me, err := tg.GetMe(ctx)
	if err != nil {
		return "", fmt.Errorf("getMe: %w", chat.RedactErr(err, cfg))
	}
	return me.Username, nil
}

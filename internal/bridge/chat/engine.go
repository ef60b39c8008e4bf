package chat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/durable"
	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/service/metrics"
)

// Options are the bridge's dependencies.
type Options struct {
	Config *config.Config
	Store  *state.Store
	Pool   *runner.Pool
	Logger zerolog.Logger
	// InheritEnv is the daemon's environment; only its allow-listed part
	// reaches the CLI (runner.BuildEnv).
	InheritEnv []string
	// HTTPClient overrides the Telegram HTTP client (tests).
	HTTPClient *http.Client
	// Outbox overrides outbox options (tests shorten pacing); the journal
	// and logger are always set by the bridge.
	Outbox outbox.Options
	// Ready is called once, after the first successful getUpdates round.
	Ready func()
	// Clock is the time schedules, retries after a limit and budgets go
	// by (nil: the wall clock); tests jump it ahead.
	Clock Clock
	// Modules builds the features, in the order the engine calls their
	// hooks and lists their commands (bridge's modules.go).
	Modules func(h *Host) []Module
	// Metrics is what the metrics module feeds (host_metrics.go); nil
	// records nothing.
	Metrics *metrics.Metrics
	// StateWatch hears of state writes the disk refused and of their
	// recovery (durable.Watcher: metrics and /healthz); nil for nobody.
	StateWatch durable.Watcher
	// Polled is when a getUpdates call last succeeded (zero before the
	// first); the bridge sets it, for the metrics. nil: never known.
	Polled func() time.Time
}

// Engine connects Telegram chats to Claude sessions.
type Engine struct {
	opts  Options
	born  time.Time // when New ran: a button on a message older than this run is from before a restart
	cfg   atomic.Pointer[config.Config]
	log   zerolog.Logger
	store *durable.Writes // the state store; refused writes are kept (durable)

	bot         *bot.Bot
	out         *outbox.Outbox
	offsets     *ingress.Offsets
	botUsername string

	reg      *Registry // what the engine and the modules registered (registry.go)
	runCtx   context.Context
	mu       sync.Mutex
	chats    map[state.ChatKey]*Chat
	buttons  map[string]buttonRef          // callback token → what it belongs to
	books    map[*runner.Session]*costBook // who pays for each session's turns (turn_costs.go)
	actors   sync.WaitGroup
	work     sync.WaitGroup // work the chats offloaded (work.go)
	starters []Starter      // the modules with background work
	draining atomic.Bool
	client   *http.Client    // Telegram's: the Bot API and file downloads
	clock    Clock           // what schedules and budgets go by (clock.go)
	versions cliVersions     // CLI versions seen in turns (world.go)
	ownDirs  *owndir.Reports // refusals of untether's own directories reported (internal/bridge/owndir)
}

// New prepares a bridge; Run starts it.
func New(opts Options) (*Engine, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("new bridge: config and store are required")
	}
	b := &Engine{opts: opts, log: opts.Logger, born: time.Now(),
		chats: map[state.ChatKey]*Chat{}, buttons: map[string]buttonRef{},
		clock: opts.Clock}
	if b.clock == nil {
		b.clock = systemClock{}
	}
	b.ownDirs = owndir.NewReports(&b.log)
	b.store = durable.New(opts.Store, opts.Logger, stateChats{b})
	b.store.SetWatcher(opts.StateWatch)
	b.reg = b.buildRegistry(opts.Modules)
	b.cfg.Store(opts.Config)
	return b, nil
}

// buildRegistry registers the engine's commands and buttons, then each
// module's in the order mods gives them, then /help.
func (b *Engine) buildRegistry(mods func(*Host) []Module) *Registry {
	r := newRegistry()
	b.registerEngine(r, false)
	if mods == nil {
		mods = func(*Host) []Module { return nil }
	}
	for _, m := range mods(&Host{e: b}) {
		m.Register(r)
		if s, ok := m.(Starter); ok {
			b.starters = append(b.starters, s)
		}
	}
	b.registerEngine(r, true)
	return r
}

// Config returns the live configuration.
func (b *Engine) Config() *config.Config { return b.cfg.Load() }

// Reload swaps in a new configuration; only the safe subset (allow-lists,
// progress settings, timeouts) takes effect for running chats.
func (b *Engine) Reload(c *config.Config) {
	b.cfg.Store(c)
	b.reloadSessions(c) // spawn.go
	b.settingsReloaded()
}

// prewarmLimit bounds how many recently active chats get their CLI started
// at boot: start-up is CPU-bound (~1 CPU-second each), and the spawn
// limiter queues them anyway.
const prewarmLimit = 8

// prewarm starts the CLIs of chats active within the idle timeout, so their
// first message after a restart does not wait for a cold start. The spawn
// limiter and the live-process cap bound it like any other start.
func (b *Engine) prewarm(ctx context.Context) {
	cfg := b.Config()
	recent, err := b.store.RecentChats(ctx, time.Now().Add(-cfg.Claude.IdleTimeout.Std()), min(prewarmLimit, cfg.Claude.MaxLiveProcesses))
	if err != nil {
		b.log.Warn().Err(err).Msg("list recent chats to prewarm")
		return
	}
	for _, rec := range recent {
		if rec.SessionID == "" || !b.Config().Telegram.ChatAllowed(int64(rec.Key.Chat)) {
			continue
		}
		c := b.chat(rec.Key, rec.Key.Chat < 0)
		if c == nil {
			return
		}
		c.post(item{fn: c.prewarm})
	}
}

// liveChats lists the chats that have an actor.
func (b *Engine) liveChats() []*Chat {
	b.mu.Lock()
	defer b.mu.Unlock()
	chats := make([]*Chat, 0, len(b.chats))
	for _, c := range b.chats {
		chats = append(chats, c)
	}
	return chats
}

// Shutdown drains: no new turns start (messages get a notice and are left
// for the next start), running turns may finish until ctx ends (their
// answers are delivered; call it while Run still polls, so buttons keep
// working), then they are interrupted, the CLIs closed and the outbox
// flushed.
func (b *Engine) Shutdown(ctx context.Context) error {
	b.draining.Store(true)
	for _, c := range b.liveChats() {
		c.shutdown(ctx)
	}
	actorsDone := make(chan struct{})
	go func() {
		b.actors.Wait()
		close(actorsDone)
	}()
	var stopErr error
	select {
	case <-actorsDone:
	case <-ctx.Done():
		stopErr = b.stopChats(actorsDone)
	}
	b.mu.Lock()
	out := b.out
	b.mu.Unlock()
	if out == nil {
		b.waitWork()
		return stopErr
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushBudget)
	defer cancel()
	b.store.WithdrawNotices(flushCtx, out)
	defer b.store.SaveKept() // after the flush, which acks journaled sends, and the offloaded work's writes
	err := out.Close(flushCtx)
	b.waitWork() // after the flush: work waiting for a send's answer has it now
	if err != nil {
		return errors.Join(stopErr, fmt.Errorf("flush outbox: %w", err))
	}
	return stopErr
}

// Stats is a live snapshot for sd_notify STATUS= and /status.
type Stats struct {
	Chats, Running, PendingApprovals int
}

// Stats counts live chats, running turns and pending approvals.
func (b *Engine) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s Stats
	for _, c := range b.chats {
		s.Chats++
		r, p := c.counts()
		s.Running += r
		s.PendingApprovals += p
	}
	return s
}

// chat returns the actor for key, starting it if needed. While draining,
// only chats that already exist are returned (a new one would start a CLI).
func (b *Engine) chat(key state.ChatKey, group bool) *Chat {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.chats[key]; ok {
		return c
	}
	if b.draining.Load() {
		return nil
	}
	c := newChat(b, key, group)
	b.chats[key] = c
	b.actors.Add(1)
	go func() {
		defer b.actors.Done()
		c.run(b.runCtx)
	}()
	return c
}

// messageReplaced persists a new id when an edit had to become a new message.
func (b *Engine) messageReplaced(m *outbox.Message, oldID, newID outbox.MessageID) {
	ctx := context.WithoutCancel(b.runCtx)
	key := state.ChatKey{Chat: state.ChatID(m.Key().Chat), Thread: state.ThreadID(m.Key().Thread)}
	live, err := b.store.ListLive(ctx)
	if err != nil {
		return
	}
	for _, l := range live {
		if l.Key == key && l.MessageID == state.MessageID(oldID) {
			_ = b.store.RemoveLive(ctx, key, l.MessageID)
			l.MessageID = state.MessageID(newID)
			_ = b.store.AddLive(ctx, l)
		}
	}
}

// RedactErr removes the bot token from an error's text: go-telegram/bot
// puts it in request URLs, which url.Error prints.
func RedactErr(err error, cfg *config.Config) error {
	if err == nil || cfg == nil {
		return err
	}
	tok := cfg.Telegram.BotToken.Reveal()
	if tok == "" || !strings.Contains(err.Error(), tok) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), tok, "[redacted]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }

func (e redactedError) Unwrap() error { return e.err }

// journal adapts the state store to the outbox's durability hook. A send
// the store refuses to journal goes out unjournaled (durable.Writes).
type journal struct{ store *durable.Writes }

func (j journal) Save(ctx context.Context, key outbox.ChatKey, kind string, payload []byte) (outbox.JournalID, error) {
	id, err := j.store.EnqueueOutbox(ctx, state.OutboxItem{Key: state.ChatKey{Chat: state.ChatID(key.Chat), Thread: state.ThreadID(key.Thread)},
		Kind: kind, Payload: payload, CreatedAt: time.Now()})
	return outbox.JournalID(id), err
}

func (j journal) Done(ctx context.Context, id outbox.JournalID) error {
	return j.store.AckOutbox(ctx, int64(id))
}

func (b *Engine) botCommands() []models.BotCommand {
	help := b.reg.help()
	out := make([]models.BotCommand, 0, len(help))
	for _, c := range help {
		out = append(out, models.BotCommand{Command: c.Command, Description: c.Description})
	}
	return out
}

// stateChats tells the state writes about the chats (durable.Chats).
type stateChats struct{ b *Engine }

// Busy lists the chats with a turn or an approval open: a refused write of
// the update offset puts their messages at risk.
func (s stateChats) Busy() []state.ChatKey {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	var keys []state.ChatKey
	for key, c := range s.b.chats {
		if r, p := c.counts(); r+p > 0 {
			keys = append(keys, key)
		}
	}
	return keys
}

// Refresh makes chat key's state notice match the fault episode, on the
// chat's actor. A chat without an actor has nothing on screen to keep in
// step, and its next message creates one that shows the notice if needed.
func (s stateChats) Refresh(key state.ChatKey) {
	s.b.mu.Lock()
	c := s.b.chats[key]
	s.b.mu.Unlock()
	if c != nil {
		c.post(item{fn: func() { s.b.store.SyncNotice(c.ctx(), s.b.out, c.key, c.outKey) }})
	}
}

// Options are the engine's options.
func (b *Engine) Options() Options { return b.opts }

package chat

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
)

// What the bridge's update routing asks of the engine: the engine starts
// in three steps around the Telegram client the bridge makes (Open,
// Connect, Start), confirms updates once their chats handled them, and
// takes messages, edits and presses the bridge admitted to their chats.

// Open readies the state for a run and returns the last update id
// confirmed to Telegram, where the poll goes on, and how many updates
// above it were handled already. Leftover CLIs of a previous run are
// killed first, before anything spawns.
func (b *Engine) Open(ctx context.Context) (offset int64, handledAbove int, err error) {
	b.store.Bind(ctx)
	b.killLeftovers(ctx) // procs.go
	offset, err = b.store.LastUpdateID(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("read the update offset: %w", err)
	}
	handled, err := b.store.HandledUpdatesAbove(ctx, offset)
	if err != nil {
		return 0, 0, fmt.Errorf("read the updates handled above the offset: %w", err)
	}
	b.offsets = ingress.NewOffsets(b.store, offset, handled)
	return offset, len(handled), nil
}

// Connect gives the engine the Telegram client (tg for the Bot API, client
// for file downloads) and the bot's username, and returns the outbox it
// sends through.
func (b *Engine) Connect(tg *bot.Bot, client *http.Client, botUsername string) *outbox.Outbox {
	b.bot, b.client, b.botUsername = tg, client, botUsername
	oopts := b.opts.Outbox
	oopts.Journal = journal{b.store}
	lg := b.log
	oopts.Logger = &lg
	oopts.OnReplaced = b.messageReplaced
	b.observeOutbox(&oopts) // host_metrics.go
	out := outbox.New(tg, oopts)
	b.mu.Lock() // Shutdown may run concurrently when a stop comes during start-up
	b.out = out
	b.mu.Unlock()
	return out
}

// Start serves chats until ctx ends: the state pruner runs, what the
// previous run left is reconciled (approvals, progress messages, the
// journal) and recently active chats get their CLIs started. The returned
// function stops the pruner.
func (b *Engine) Start(ctx context.Context) (stop func()) {
	b.runCtx = ctx
	stop = b.startStatePruner(ctx) // retention.go
	if err := b.reconcile(ctx); err != nil {
		b.log.Error().Err(err).Msg("reconcile state left by the previous run")
	}
	b.prewarm(ctx)
	return stop
}

// StartModules starts the modules' background work (the scheduler, the
// pruners); the returned function stops it and waits for it.
func (b *Engine) StartModules(ctx context.Context) (stop func()) { return b.startModules(ctx) }

// BotCommands are the commands for setMyCommands, in /help's order.
func (b *Engine) BotCommands() []models.BotCommand { return b.botCommands() }

// Draining reports whether Shutdown began.
func (b *Engine) Draining() bool { return b.draining.Load() }

// BeginUpdate reports whether update id is new (not handled already, by
// this run or the previous one); a new one is then open until finished.
func (b *Engine) BeginUpdate(id int64) bool { return b.offsets.Begin(id) }

// FinishUpdate confirms update id: handled, or deliberately not.
func (b *Engine) FinishUpdate(id int64) { b.finishUpdate(id) }

// SkipUpdate marks a refused update handled in memory only: no database
// write, so strangers (or a chatty group) cost nothing. The offset is
// persisted with the next update handled normally.
func (b *Engine) SkipUpdate(id int64) { b.offsets.Skip(id) }

// WhileDraining reports whether command name is answered while untether
// restarts (other messages are kept for after the restart).
func (b *Engine) WhileDraining(name string) bool { return b.reg.whileDraining(name) }

// DeliverMessage hands message m of update updateID to the actor of key
// (started if needed; group: a group or topic). It reports false when the
// engine drains and key has no actor: the message stays kept for the next
// start.
func (b *Engine) DeliverMessage(key state.ChatKey, group bool, updateID int64, m *models.Message) bool {
	c := b.chat(key, group)
	if c == nil {
		return false
	}
	c.post(item{updateID: updateID, msg: m})
	return true
}

// DeliverEdit hands an edited message to its chat's edit handler. It
// reports false when no module handles edits, or the engine drains and
// key has no actor (an edit notice is not worth keeping).
func (b *Engine) DeliverEdit(key state.ChatKey, group bool, updateID int64, m *models.Message) bool {
	if b.reg.onEdit == nil {
		return false
	}
	c := b.chat(key, group)
	if c == nil {
		return false
	}
	c.post(item{updateID: updateID, fn: func() { b.reg.onEdit(c, m) }})
	return true
}

// KeepUpdate keeps what Telegram sent of an update until its chat handled
// it (go-telegram/bot has already confirmed it to Telegram, so after a
// crash this copy is the only one); onDisk reports whether it is on disk.
func (b *Engine) KeepUpdate(ctx context.Context, id int64, payload []byte) (onDisk bool, err error) {
	return b.store.DeferUpdateOnDisk(ctx, state.DeferredUpdate{UpdateID: id, Payload: payload})
}

// KeptUpdates are the updates the previous run kept and did not handle.
func (b *Engine) KeptUpdates(ctx context.Context) ([]state.DeferredUpdate, error) {
	return b.store.DeferredUpdates(ctx)
}

// ForgetKeptUpdate drops a kept update that will not be handled.
func (b *Engine) ForgetKeptUpdate(ctx context.Context, id int64) error {
	return b.store.ForgetDeferredUpdate(ctx, id)
}

// Notify sends a notice to a chat that need not have an actor (a message
// kept during a restart is answered so).
func (b *Engine) Notify(ctx context.Context, key state.ChatKey, html string, replyTo int) {
	b.out.Send(ctx, outKey(key), outbox.High, outbox.Content{Text: html}, outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
}

// MigrateChat moves everything kept for a group that became a supergroup
// to its new id, live chats included (migrate.go).
func (b *Engine) MigrateChat(ctx context.Context, from, to state.ChatID) {
	b.migrateChat(ctx, from, to)
}

// AnswerCallback answers a button press off the caller's goroutine.
func (b *Engine) AnswerCallback(id, text string, alert bool) { b.answerCallback(id, text, alert) }

// ChatsHealthy reports the chats whose mailboxes have not moved for two
// minutes, as a *WedgedError (wedged.go): their actors are wedged. A chat
// waiting for a live slot or a human keeps handling its mailbox, so it
// never shows here.
func (b *Engine) ChatsHealthy(now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.wedged(now)
}

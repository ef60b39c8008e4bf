package bridge

// Routing of one polled update: the message, press or edit it carries goes
// to its chat's actor, or is declined or skipped here (a stranger, a
// service message, a group message not for the bot); a message is kept in
// the state database until its chat has handled it, and what the previous
// run kept is replayed at start.

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
)

// handleUpdate runs in the library's single worker: it only checks, dedupes
// and routes, so a slow chat never holds up the others. Every update ends
// routed to a chat, declined in place (a stranger, a stale button) or
// skipped; skipped and repaired ones are logged, and each gets a debug line.
// note is what the update guard learned about it. The error reports a
// routing panic.
func (b *Bridge) handleUpdate(ctx context.Context, u *models.Update, note ingress.Note) (err error) {
	if !b.e.BeginUpdate(u.ID) {
		b.log.Debug().Int64("update_id", u.ID).Msg("dropping an update already handled")
		return nil
	}
	routed := false
	defer func() {
		if r := recover(); r != nil {
			b.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Int64("update_id", u.ID).Msg("panic while routing an update")
			err = fmt.Errorf("route update %d: panic: %v", u.ID, r)
		}
		if !routed {
			b.e.FinishUpdate(u.ID)
		}
	}()
	switch {
	case u.Message != nil:
		b.logRepaired(u, note)
		routed = b.routeMessage(ctx, u.ID, u.Message, note)
	case u.CallbackQuery != nil:
		b.logRepaired(u, note)
		routed = b.routeCallback(ctx, u.ID, u.CallbackQuery)
	case u.EditedMessage != nil:
		b.logRepaired(u, note)
		routed = b.routeEdit(u.ID, u.EditedMessage, note) // the phone module answers edits
	default:
		note.LogUnrouted(b.log, u)
	}
	b.log.Debug().Int64("update_id", u.ID).Bool("routed", routed).Msg("update handled")
	return nil
}

// logRepaired logs an update routed without the parts the library could
// not decode, at warn level only when an allowed user sent it.
func (b *Bridge) logRepaired(u *models.Update, note ingress.Note) {
	var from int64
	switch {
	case u.Message != nil && u.Message.From != nil:
		from = u.Message.From.ID
	case u.CallbackQuery != nil:
		from = u.CallbackQuery.From.ID
	}
	note.LogRepaired(b.log, u, from != 0 && b.Config().Telegram.UserAllowed(from))
}

// note carries the update as Telegram sent it (kept until handled) and the
// service member the guard saw in it, if any (ingress/service.go).
func (b *Bridge) routeMessage(ctx context.Context, updateID int64, m *models.Message, note ingress.Note) bool {
	if m.ID == 0 || m.Chat.ID == 0 {
		// Telegram never sends one; a repaired or hostile update might.
		b.log.Warn().Int64("update_id", updateID).Msg("ignoring a message without a message id or chat id")
		return false
	}
	if from, to, ok := migration(m); ok {
		b.e.MigrateChat(ctx, from, to)
		return false
	}
	service := note.Service()
	if service == "" {
		service = ingress.ServiceOf(m)
	}
	if service != "" {
		// Telegram wrote it about the chat (a pin, a member joining, a
		// topic opened); nobody wrote it to the bot. A debug line only: a
		// busy group makes many.
		b.log.Debug().Int64("update_id", updateID).Int64("chat_id", m.Chat.ID).Str("service", service).
			Msg("ignoring a service message")
		return false
	}
	if !b.admit(m) { // admit.go
		return b.dropQuietly(updateID)
	}
	key := chat.ChatKeyOf(m)
	// What the library leaves without text (a rich message, a checklist)
	// is read here, from the update as Telegram sent it: on a replay too.
	rd := ingress.ReadableOf(m, note.Raw())
	if rd.Unreadable { // answered, and not kept: there is nothing to hand on
		b.e.Notify(ctx, key, unreadableText(rd.Unread), m.ID)
		return false
	}
	// Kept until its chat handled it: go-telegram/bot has already
	// confirmed it to Telegram, so after a crash this copy is the only one.
	// What Telegram sent, not the library's model encoded again: that
	// loses what the library decodes but cannot encode (PaidMedia).
	payload, err := note.Raw(), error(nil)
	if payload == nil { // a message not polled through the guard
		payload, err = json.Marshal(models.Update{ID: updateID, Message: m})
	}
	onDisk := false
	if err == nil {
		onDisk, err = b.e.KeepUpdate(ctx, updateID, payload)
	}
	if err != nil {
		b.log.Error().Err(err).Int64("update_id", updateID).Msg("keep a message until it is handled")
	}
	if b.e.Draining() {
		if cmd, ok := ingress.ParseCommand(m.Text, m.Entities, b.botUsername); !ok || !b.e.WhileDraining(cmd.Name) {
			text := "⏸ untether is restarting. I will handle this message when I am back, in a moment."
			if err != nil || !onDisk { // promised only once it is on disk: the restart loses what is in memory
				text = "⏸ untether is restarting and could not keep this message. Please send it again in a minute."
			}
			b.e.Notify(ctx, key, text, m.ID)
			return true // left unhandled on purpose: the next start handles it
		}
	}
	if len(rd.Unread) > 0 {
		b.e.Notify(ctx, key, "ℹ️ Claude gets the text of this message, but untether could not pass on "+
			render.EscapeHTML(strings.Join(rd.Unread, ", "))+".", m.ID)
	}
	b.e.DeliverMessage(key, m.Chat.Type != models.ChatTypePrivate, updateID, rd.Msg) // draining, and no chat to take it: kept for the next start
	return true
}

// unreadableText says that nothing of a message could be read, and what
// it held.
func unreadableText(unread []string) string {
	what := "nothing untether can read"
	if len(unread) > 0 {
		what = "only " + strings.Join(unread, ", ")
	}
	return "⚠️ untether cannot read this message: it holds " + render.EscapeHTML(what) + ", so it did not go to Claude. Send it as text, a photo or a file."
}

// replayDeferred handles the messages the previous run received but did not
// handle (a drain kept them, or a crash caught them in a chat's mailbox).
// They go through the normal path under their own update ids, so they are
// deduplicated and kept until handled like any other.
func (b *Bridge) replayDeferred(ctx context.Context) {
	deferred, err := b.e.KeptUpdates(ctx)
	if err != nil {
		b.log.Error().Err(err).Msg("read messages kept by the previous run")
		return
	}
	for _, d := range deferred {
		var u models.Update
		if err := json.Unmarshal(d.Payload, &u); err != nil || u.Message == nil {
			b.log.Error().Err(err).Int64("update_id", d.UpdateID).Msg("drop an unreadable kept message")
			_ = b.e.ForgetKeptUpdate(ctx, d.UpdateID)
			continue
		}
		u.ID = d.UpdateID
		if !b.admit(u.Message) { // e.g. its group was taken off allowed_chat_ids
			_ = b.e.ForgetKeptUpdate(ctx, d.UpdateID)
			continue
		}
		_ = b.handleUpdate(ctx, &u, ingress.KeptNote(d.Payload)) // a panic is logged; the update is finished either way
	}
	if len(deferred) > 0 {
		b.log.Info().Int("messages", len(deferred)).Msg("handling messages the previous run received but did not handle")
	}
}

// routeEdit hands an edited message to its chat. An edit is never sent to
// Claude by itself: the chat says so and offers to send the new version.
func (b *Bridge) routeEdit(updateID int64, m *models.Message, note ingress.Note) bool {
	if m.ID == 0 || m.Chat.ID == 0 || !b.admit(m) {
		return false
	}
	m = ingress.ReadableOf(m, note.Raw()).Msg // an edited rich message's new text
	return b.e.DeliverEdit(chat.ChatKeyOf(m), m.Chat.Type != models.ChatTypePrivate, updateID, m)
}

// migration returns the (from, to) pair a service message announces.
func migration(m *models.Message) (from, to state.ChatID, ok bool) {
	switch {
	case m.MigrateToChatID != 0:
		return state.ChatID(m.Chat.ID), state.ChatID(m.MigrateToChatID), true
	case m.MigrateFromChatID != 0:
		return state.ChatID(m.MigrateFromChatID), state.ChatID(m.Chat.ID), true
	}
	return 0, 0, false
}

package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// JournalID identifies a journal entry; 0 means "not journaled".
type JournalID int64

// KindSend is the journal kind of a journaled send.
const KindSend = "send"

// Journal makes high-priority sends survive a crash. The outbox saves each
// one before its first attempt and marks it done once Telegram accepted it (or
// refused it for good). Entries never marked done are what the bridge passes
// to [Outbox.Restore] at startup, in ID order. By the time a journaled
// send's Pending resolves (other than with ErrClosed), Done has been called.
// The payload is opaque to the journal. The state store implements it.
type Journal interface {
	Save(ctx context.Context, key ChatKey, kind string, payload []byte) (JournalID, error)
	Done(ctx context.Context, id JournalID) error
}

// JournalEntry is a saved entry as read back from the journal.
type JournalEntry struct {
	ID      JournalID
	Key     ChatKey
	Kind    string
	Payload []byte
}

// sendRecord is the journal payload of a send. Fields are only ever added,
// so entries written by an older build still replay.
type sendRecord struct {
	V        int             `json:"v"`
	Chat     int64           `json:"chat"`
	Thread   int             `json:"thread,omitempty"`
	Text     string          `json:"text"`
	Keyboard json.RawMessage `json:"keyboard,omitempty"`
	ReplyTo  MessageID       `json:"reply_to,omitempty"`
	Silent   bool            `json:"silent,omitempty"`
	Tag      string          `json:"tag,omitempty"`
}

func (o *Outbox) journalSave(ctx context.Context, op *op, tag string) {
	payload, err := json.Marshal(sendRecord{
		V: 1, Chat: op.key.Chat, Thread: op.key.Thread, Text: op.text, Keyboard: op.kb,
		ReplyTo: op.replyTo, Silent: op.silent, Tag: tag,
	})
	if err == nil {
		var id JournalID
		id, err = o.opt.Journal.Save(ctx, op.key, KindSend, payload)
		op.journal = id
	}
	if err != nil {
		// Delivering the message matters more than its durability, so a
		// journal failure is reported and the send goes ahead.
		o.stats.journalErrs.Add(1)
		o.logger(op).Error().Err(err).Int64("chat_id", op.key.Chat).Msg("Could not journal outgoing message")
	}
}

func (o *Outbox) journalDone(op *op) {
	// Done must land even while Close is cancelling the run context: the
	// message was delivered and replaying it would duplicate it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(o.runCtx), journalTimeout)
	defer cancel()
	if err := o.opt.Journal.Done(ctx, op.journal); err != nil {
		o.stats.journalErrs.Add(1)
		o.logger(op).Error().Err(err).Int64("chat_id", op.key.Chat).Int64("journal_id", int64(op.journal)).
			Msg("Could not mark journaled message done; it may be sent again after a restart")
	}
}

// Restore re-enqueues journaled sends left over from a previous run, at high
// priority and in the given order, and returns their handles (nil for entries
// that could not be decoded). The entries stay journaled until delivered.
// Use each handle's Tag and Sent() to learn the new message ids. The error
// lists undecodable entries; the caller decides whether to discard them.
func (o *Outbox) Restore(ctx context.Context, entries []JournalEntry) ([]*Message, error) {
	msgs := make([]*Message, len(entries))
	var errs []error
	for i, e := range entries {
		if e.Kind == KindMedia {
			m, err := o.restoreMedia(ctx, e) // media.go
			msgs[i] = m
			if err != nil {
				errs = append(errs, fmt.Errorf("restore journal entry %d: %w", e.ID, err))
			}
			continue
		}
		rec, err := decodeSend(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("restore journal entry %d: %w", e.ID, err))
			continue
		}
		key := ChatKey{Chat: rec.Chat, Thread: rec.Thread}
		m := &Message{key: key, tag: rec.Tag, sent: newPending()}
		msgs[i] = m
		c := Content{Text: rec.Text}
		if len(rec.Keyboard) > 0 {
			c.Keyboard = rec.Keyboard
		}
		kb, err := validate(key, c)
		if err != nil {
			m.unsent = err
			m.sent.resolve(Result{}, err)
			errs = append(errs, fmt.Errorf("restore journal entry %d: %w", e.ID, err))
			continue
		}
		o.enqueue(&op{
			kind: kindSend, prio: High, key: key, msg: m, text: rec.Text, kb: kb,
			replyTo: rec.ReplyTo, silent: rec.Silent, pending: m.sent,
			log: ctxLogger(ctx), journal: e.ID,
		})
	}
	return msgs, errors.Join(errs...)
}

func decodeSend(e JournalEntry) (sendRecord, error) {
	var rec sendRecord
	return rec, decodeEntry(e, KindSend, &rec)
}

// decodeEntry decodes the payload of a journal entry of kind into rec; every
// payload carries its version as "v", and only version 1 exists.
func decodeEntry(e JournalEntry, kind string, rec any) error {
	if e.Kind != kind {
		return fmt.Errorf("unknown kind %q", e.Kind)
	}
	var v struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		return fmt.Errorf("decode payload: %w", err)
	}
	if v.V != 1 {
		return fmt.Errorf("unsupported payload version %d", v.V)
	}
	if err := json.Unmarshal(e.Payload, rec); err != nil {
		return fmt.Errorf("decode payload: %w", err)
	}
	return nil
}

// EntryTag returns the Tag a journaled send was made with ("" if the
// payload cannot be read), so the bridge can decide which leftovers are
// still worth delivering after a restart.
func EntryTag(e JournalEntry) string {
	if e.Kind == KindMedia {
		return mediaTag(e)
	}
	rec, err := decodeSend(e)
	if err != nil {
		return ""
	}
	return rec.Tag
}

package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"
)

// errNoMessageID means sendMessage "succeeded" without a message id; the
// handle could never be edited, so it is treated as a failure.
var errNoMessageID = errors.New("telegram returned no message id")

// execute performs op and applies the outcome. It reports false when the
// outbox was stopped during the call; the op is then unflushed.
func (o *Outbox) execute(c *chat, op *op) bool {
	d := op.dispatch() // before settle, which may requeue op (the next chunk)
	ctx, cancel := context.WithTimeout(o.runCtx, o.timeoutFor(op))
	id, err := o.call(ctx, op)
	cancel()
	o.gate.release(op.takeSlot())
	if err != nil && o.runCtx.Err() != nil {
		return false
	}
	c.mu.Lock()
	fx := o.settle(c, op, id, err, o.clock.Now())
	c.mu.Unlock()
	fx.apply(o)
	o.delivered(op, d, err)
	return true
}

// delivered tells Options.Delivered about a call Telegram accepted.
func (o *Outbox) delivered(op *op, d Dispatch, err error) {
	if err == nil && o.opt.Delivered != nil && op.kind != kindTyping {
		o.opt.Delivered(d)
	}
}

// dispatch describes op's call as it goes to Telegram (callAt is set).
func (op *op) dispatch() Dispatch {
	return Dispatch{Key: op.key, Kind: op.kind.String(), Priority: op.prio,
		Tag: op.tagOf(), Text: op.text, Queued: op.since, Sent: op.callAt}
}

// executeAsync performs a low-priority op on its own goroutine (see run).
func (o *Outbox) executeAsync(c *chat, job *op) {
	defer o.wg.Done()
	d := job.dispatch()
	ctx, cancel := context.WithTimeout(o.runCtx, o.timeoutFor(job))
	id, err := o.call(ctx, job)
	cancel()
	o.gate.release(job.takeSlot())
	c.mu.Lock()
	c.inflight = nil
	var fx effects
	lost := make([]*op, 0, 1)
	if err != nil && o.runCtx.Err() != nil {
		lost = append(lost, job)
	} else {
		fx = o.settle(c, job, id, err, o.clock.Now())
	}
	if c.gone {
		// Close gave up while the call ran: the worker has left, so
		// nothing queued (a retry, a chunk) would ever run.
		lost = append(append(lost, c.high...), c.low...)
		c.high, c.low = nil, nil
	}
	c.mu.Unlock()
	fx.apply(o)
	o.delivered(job, d, err)
	o.unflush(lost)
	c.signal()
}

func noPreview() *models.LinkPreviewOptions {
	return &models.LinkPreviewOptions{IsDisabled: bot.True()}
}

// call makes the one Telegram request op stands for.
func (o *Outbox) call(ctx context.Context, op *op) (MessageID, error) {
	if op.sendsMessage() {
		o.settleDrafts(op.key.Chat) // draft.go
	}
	if op.media != nil && op.kind == kindSend {
		return o.callMedia(ctx, op) // media.go
	}
	text, mode := op.text, models.ParseModeHTML
	switch {
	case op.chunks != nil:
		text, mode = op.chunks[op.chunk], ""
	case op.plain:
		text, mode = plainText(op.text), ""
	}
	var markup models.ReplyMarkup
	if len(op.kb) > 0 && op.chunk == 0 {
		markup = op.kb
	}
	thread := op.key.Thread
	if thread == 1 {
		// The General topic has id 1 but must be addressed without a
		// thread id (telegram.md §1.7).
		thread = 0
	}
	switch {
	case op.kind == kindTyping:
		_, err := o.api.SendChatAction(ctx, &bot.SendChatActionParams{
			ChatID: op.key.Chat, MessageThreadID: thread, Action: models.ChatActionTyping,
		})
		return 0, err
	case op.kind == kindDelete:
		_, err := o.api.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: op.key.Chat, MessageID: int(op.msg.ID())})
		return 0, err
	case op.sendsMessage():
		p := &bot.SendMessageParams{
			ChatID: op.key.Chat, MessageThreadID: thread, Text: text, ParseMode: mode,
			LinkPreviewOptions: noPreview(), DisableNotification: op.silent, ReplyMarkup: markup,
		}
		if op.kind == kindSend && op.chunk == 0 && op.replyTo != 0 {
			// Quoting must not make the answer fail when the user deleted
			// the message it answers.
			p.ReplyParameters = &models.ReplyParameters{MessageID: int(op.replyTo), AllowSendingWithoutReply: true}
		}
		msg, err := o.api.SendMessage(ctx, p)
		if err != nil {
			return 0, err
		}
		if msg == nil || msg.ID == 0 {
			return 0, errNoMessageID
		}
		return MessageID(msg.ID), nil
	default:
		id := op.msg.ID()
		_, err := o.api.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID: op.key.Chat, MessageID: int(id), Text: text, ParseMode: mode,
			LinkPreviewOptions: noPreview(), ReplyMarkup: markup,
		})
		return id, err
	}
}

type class uint8

const (
	classTransient class = iota // transport, 5xx, decode errors: retry with backoff
	classRateLimited
	classNotModified
	classGone // edit/delete target missing or not editable
	classParse
	classTooLong
	classForbidden
	classMigrated
	classPermanent
)

// classify maps a go-telegram/bot error to what the outbox does about it. The
// library types 429 and migration as structs (errors.As only) and every other
// 4xx as a sentinel wrapped with Telegram's description (telegram.md §1.8).
func classify(err error) (class, time.Duration) {
	var tmr *bot.TooManyRequestsError
	if errors.As(err, &tmr) {
		return classRateLimited, time.Duration(tmr.RetryAfter) * time.Second
	}
	var mig *bot.MigrateError
	if errors.As(err, &mig) {
		return classMigrated, 0
	}
	switch {
	case errors.Is(err, bot.ErrorForbidden):
		return classForbidden, 0
	case errors.Is(err, bot.ErrorBadRequest):
		d := strings.ToLower(err.Error())
		switch {
		case strings.Contains(d, "message is not modified"):
			return classNotModified, 0
		case strings.Contains(d, "message to edit not found"),
			strings.Contains(d, "message can't be edited"),
			strings.Contains(d, "message to delete not found"),
			strings.Contains(d, "message_id_invalid"):
			return classGone, 0
		case strings.Contains(d, "can't parse entities"),
			strings.Contains(d, "can't find end tag"),
			strings.Contains(d, "unsupported start tag"):
			return classParse, 0
		case strings.Contains(d, "message is too long"), strings.Contains(d, "text is too long"):
			return classTooLong, 0
		}
		return classPermanent, 0
	case errors.Is(err, bot.ErrorUnauthorized), errors.Is(err, bot.ErrorNotFound),
		errors.Is(err, bot.ErrorConflict), errors.Is(err, errNoMessageID), errors.Is(err, ErrMediaFile):
		return classPermanent, 0
	}
	// Everything else (connection errors, 5xx, a per-call timeout, a proxy's
	// HTML error page) may pass; Telegram being down must not lose messages.
	return classTransient, 0
}

// effects are the parts of settling an op that must run without the chat
// lock held: journal I/O and the caller's callback. Results that depend on
// them are resolved only afterwards, so a caller that saw a result can rely
// on the journal and on having been told about a replacement.
type effects struct {
	deferred  []outcome
	replaced  *op      // an edit delivered as a new message
	recovered bool     // a call succeeded: other chats may stop backing off
	mark      CallMark // when that call was sent
	probe     bool     // a call failed as if Telegram were down
	// pauseDrafts is the end of a 429 pause of a chat's messages: its
	// drafts wait too, since Telegram's flood control is the chat's.
	pauseDrafts       time.Time
	pauseDraftsOfChat int64
}

type outcome struct {
	op  *op
	res Result
	err error
}

// finish resolves op now, or after the effects when they concern it.
func (fx *effects) finish(op *op, res Result, err error) {
	op.settleMerged(res, err) // merged ops are never journaled
	if op.journal != 0 || op == fx.replaced {
		fx.deferred = append(fx.deferred, outcome{op: op, res: res, err: err})
		return
	}
	op.pending.resolve(res, err)
}

func (fx effects) apply(o *Outbox) {
	for _, d := range fx.deferred {
		if d.op.journal != 0 {
			o.journalDone(d.op)
		}
	}
	if op := fx.replaced; op != nil && o.opt.OnReplaced != nil {
		o.opt.OnReplaced(op.msg, op.replacedFrom, op.msg.ID())
	}
	for _, d := range fx.deferred {
		d.op.pending.resolve(d.res, d.err)
	}
	if fx.recovered {
		o.Reachable(fx.mark)
	}
	if fx.probe {
		o.startProber()
	}
	if !fx.pauseDrafts.IsZero() {
		o.pauseDrafts(fx.pauseDraftsOfChat, fx.pauseDrafts) // draft.go
	}
}

func opEvent(e *zerolog.Event, op *op) *zerolog.Event {
	e = e.Int64("chat_id", op.key.Chat).Str("op", op.kind.String()).Stringer("priority", op.prio)
	if op.key.Thread != 0 {
		e = e.Int("thread_id", op.key.Thread)
	}
	if op.msg != nil {
		if id := op.msg.ID(); id != 0 {
			e = e.Int("message_id", int(id))
		}
	}
	return e
}

// settle applies the outcome of a call to the chat and op. Called with c.mu
// held.
func (o *Outbox) settle(c *chat, op *op, id MessageID, err error, now time.Time) effects {
	if err == nil {
		o.reached(c)
		fx := o.succeed(c, op, id, false, now)
		fx.recovered, fx.mark = true, op.mark
		return fx
	}
	cls, retryAfter := classify(err)
	log := o.logger(op)
	switch cls {
	case classNotModified:
		if op.kind == kindEdit && !op.sendsMessage() {
			o.reached(c)
			return o.succeed(c, op, op.msg.ID(), true, now)
		}
	case classGone:
		if op.kind == kindDelete {
			o.reached(c)
			return o.succeed(c, op, 0, false, now)
		}
		if op.kind == kindEdit && !op.sendsMessage() {
			m := op.msg
			if m.deleteQueued {
				m.deleted = true // nothing left to delete either
				op.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
				return effects{}
			}
			if m.noReplace.Load() {
				// The caller would rather forget the message than see
				// it sent again: Telegram answered, nothing else to do.
				o.reached(c)
				m.gone, m.deleted = true, true
				opEvent(log.Info(), op).Str("reason", err.Error()).Msg("Edit target is gone; not sending it again")
				op.pending.resolve(Result{MessageID: m.ID(), Outcome: OutcomeGone}, nil)
				return effects{}
			}
			opEvent(log.Info(), op).Str("reason", err.Error()).Msg("Edit target is gone; sending a new message instead")
			op.replacedFrom, op.asSend = m.ID(), true
			m.id.Store(0) // later edits wait for the replacement's id
			o.requeue(c, op)
			return effects{}
		}
	case classParse:
		if !op.plain && op.chunks == nil {
			o.stats.plainText.Add(1)
			opEvent(log.Warn(), op).Err(err).Msg("Telegram could not parse the HTML; resending as plain text")
			op.plain = true
			o.requeue(c, op)
			return effects{}
		}
	case classTooLong:
		if op.chunks == nil {
			if chunks := splitText(plainText(op.text), o.opt.SplitLimit); len(chunks) > 0 {
				o.stats.splits.Add(1)
				opEvent(log.Warn(), op).Int("chunks", len(chunks)).Msg("Text too long for Telegram; splitting it as plain text")
				op.chunks, op.plain = chunks, true
				o.requeue(c, op)
				return effects{}
			}
		}
	case classRateLimited:
		if retryAfter <= 0 {
			retryAfter = DefaultRetryAfter
		}
		if o.opt.RateLimited != nil {
			o.opt.RateLimited(op.key, retryAfter)
		}
		pause := retryAfter + o.opt.Jitter(o.opt.RateLimitJitter)
		if until := now.Add(pause); until.After(c.pausedUntil) {
			c.pausedUntil = until
		}
		// Telegram is stricter with this chat than the model: it bursts
		// less for a while (bucket.go).
		c.lim.penalise(now)
		if b, ok := c.lim.(*bucket); ok {
			o.learnt.note(c.id, b, now)
		}
		o.stats.rateLimited.Add(1)
		opEvent(log.Warn(), op).Dur("retry_after", retryAfter).Dur("pause", pause).Msg("Telegram rate limit; pausing chat")
		fx := effects{pauseDrafts: c.pausedUntil, pauseDraftsOfChat: c.id}
		if op.kind == kindTyping {
			op.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
			return fx
		}
		o.requeue(c, op)
		return fx
	case classForbidden, classMigrated:
		var verdict error = &BlockedError{Chat: c.id, Err: err}
		var mig *bot.MigrateError
		if errors.As(err, &mig) {
			verdict = &MigratedError{Chat: c.id, NewChat: int64(mig.MigrateToChatID), Err: err}
		}
		c.blockErr, c.blockedUntil = verdict, now.Add(o.opt.ForbiddenCooldown)
		opEvent(log.Warn(), op).Err(err).Dur("cooldown", o.opt.ForbiddenCooldown).Msg("Telegram chat unavailable; failing its queue")
		return o.failAll(c, op, verdict)
	case classTransient:
		o.failed(c)
		high, low := o.backoff(c.failures, o.opt.HighBackoffMax), o.backoff(c.failures, o.opt.BackoffMax)
		c.retryHigh, c.retryLow = now.Add(high), now.Add(low)
		if !op.callAt.IsZero() {
			// Telegram did not count a call that never reached it (or
			// that its front end refused), so neither does the window.
			c.lim.undo(op.callAt)
		}
		o.stats.retries.Add(1)
		delay := low
		if op.prio == High {
			delay = high
		}
		opEvent(log.Warn(), op).Err(err).Int("attempt", c.failures).Dur("delay", delay).Msg("Telegram request failed; retrying")
		fx := effects{probe: true}
		if op.kind == kindTyping {
			op.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
			return fx
		}
		o.requeue(c, op)
		return fx
	}
	return o.fail(op, fmt.Errorf("telegram %s in chat %d: %w", op.kind, op.key.Chat, err))
}

// backoff is the wait before the next attempt after failures consecutive
// transport failures: doubling from BackoffMin up to limit, plus jitter.
func (o *Outbox) backoff(failures int, limit time.Duration) time.Duration {
	d := min(o.opt.BackoffMin, limit)
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d + o.opt.Jitter(d/4)
}

// requeue puts an op that will be retried back at the head of its queue,
// unless a newer edit of the same message, or its deletion, has made it
// moot. A retried edit becomes the coalescing target again, so edits
// requested during a 429 pause collapse into it.
func (o *Outbox) requeue(c *chat, op *op) {
	if op.kind == kindEdit && op.chunk == 0 {
		m := op.msg
		if m.deleteQueued || m.deleted {
			if op.asSend {
				m.deleted = true // the original is gone; nothing left to delete
			}
			op.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
			return
		}
		if newer := m.pendingEdit; newer != nil && newer != op {
			if op.asSend {
				newer.asSend, newer.replacedFrom = true, op.replacedFrom
			}
			o.stats.coalesced.Add(1)
			op.pending.resolve(Result{Outcome: OutcomeSuperseded}, nil)
			return
		}
		if op.chunks == nil {
			m.pendingEdit = op
		}
	}
	if op.kind == kindSend && op.chunk == 0 && op.msg != nil {
		op.msg.queuedSend = op
	}
	c.pushFront(op)
}

func (o *Outbox) succeed(c *chat, op *op, id MessageID, unchanged bool, now time.Time) effects {
	var fx effects
	switch op.kind {
	case kindTyping:
		c.lastTyping = now
		o.stats.chatActions.Add(1)
		op.pending.resolve(Result{Outcome: OutcomeSent}, nil)
		return fx
	case kindDelete:
		op.msg.deleted = true
		o.stats.deleted.Add(1)
		op.pending.resolve(Result{MessageID: op.msg.ID(), Outcome: OutcomeDeleted}, nil)
		return fx
	}
	m := op.msg
	if op.chunk == 0 {
		switch {
		case op.kind == kindSend:
			m.id.Store(int64(id))
			op.first = Result{MessageID: id, Outcome: OutcomeSent}
			o.stats.sent.Add(1)
		case op.asSend:
			m.id.Store(int64(id))
			op.first = Result{MessageID: id, Outcome: OutcomeReplaced}
			o.stats.replaced.Add(1)
			fx.replaced = op
		case unchanged:
			op.first = Result{MessageID: id, Outcome: OutcomeUnchanged}
			o.stats.unchanged.Add(1)
		default:
			op.first = Result{MessageID: id, Outcome: OutcomeEdited}
			o.stats.edited.Add(1)
		}
		m.shown, m.hasShown = op.contentHash(), true
	} else {
		o.stats.sent.Add(1)
	}
	if op.sendsMessage() && c.typing != nil && c.typing.seq < op.seq {
		// Telegram clears the indicator when our message arrives, so a typing
		// request older than the message would only mislead.
		c.typing.pending.resolve(Result{Outcome: OutcomeSkipped}, nil)
		c.typing = nil
	}
	opEvent(o.logger(op).Debug(), op).Int("text_len", len(op.text)).Int("chunk", op.chunk).Msg("Telegram operation done")
	if op.chunks != nil && op.chunk+1 < len(op.chunks) {
		op.chunk++
		c.pushFront(op)
		return fx
	}
	fx.finish(op, op.first, nil)
	return fx
}

// fail resolves op with a permanent error.
func (o *Outbox) fail(op *op, err error) effects {
	var fx effects
	o.stats.failed.Add(1)
	if op.msg != nil && op.chunk == 0 && (op.kind == kindSend || op.asSend) {
		op.msg.unsent = err // edits of a message that never existed fail too
	}
	opEvent(o.logger(op).Warn(), op).Err(err).Msg("Telegram operation failed")
	fx.finish(op, Result{}, err)
	return fx
}

// failAll fails op and everything queued for the chat with a chat-wide
// verdict (403, migration).
func (o *Outbox) failAll(c *chat, cur *op, verdict error) effects {
	var fx effects
	for _, x := range append(append([]*op{cur}, c.high...), c.low...) {
		o.stats.failed.Add(1)
		if x.msg != nil {
			if x.chunk == 0 && (x.kind == kindSend || x.asSend) {
				x.msg.unsent = verdict
			}
			if x.msg.pendingEdit == x {
				x.msg.pendingEdit = nil
			}
			if x.msg.queuedSend == x {
				x.msg.queuedSend = nil
			}
		}
		fx.finish(x, Result{}, verdict)
	}
	c.high, c.low = nil, nil
	if c.typing != nil {
		c.typing.pending.resolve(Result{}, verdict)
		c.typing = nil
	}
	return fx
}

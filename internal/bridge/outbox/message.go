package outbox

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// ChatKey names where a message goes: a chat and, in forum supergroups, a
// topic. Thread 0 means no topic. Pacing, 429 pauses and ordering are per
// Chat, because Telegram's limits are per chat, not per topic.
type ChatKey struct {
	Chat   int64
	Thread int
}

// MessageID is a Telegram message id, unique within one chat.
type MessageID int

// Priority orders operations within a chat.
type Priority uint8

const (
	// Low is for progress edits: latest state wins and they may wait.
	Low Priority = iota
	// High is for approval prompts, final answers, error notices and decision
	// edits. High operations always run before Low ones of the same chat and
	// are never dropped while the outbox is open.
	High
)

func (p Priority) String() string {
	if p == High {
		return "high"
	}
	return "low"
}

// Content is what a message shows.
type Content struct {
	// Text is Telegram HTML (parse_mode HTML). It must not be empty.
	Text string
	// Keyboard is the reply_markup, JSON-marshalled as is (typically the
	// bridge's own inline keyboard type). Nil means no keyboard; note that an
	// edit without a keyboard removes the buttons a message had.
	Keyboard any
}

// SendOptions are the per-send extras.
type SendOptions struct {
	// ReplyTo quotes a message of the same chat. The send still succeeds if
	// that message is gone.
	ReplyTo MessageID
	// Silent sends without a notification sound.
	Silent bool
	// Tag is an opaque caller label kept in the journal, so after a restart
	// the bridge can tell which replayed message is which.
	Tag string
}

// Outcome says what an operation ended up doing.
type Outcome uint8

const (
	// OutcomeSent: a new message was sent; Result.MessageID is its id.
	OutcomeSent Outcome = iota + 1
	// OutcomeEdited: the message now shows the requested content.
	OutcomeEdited
	// OutcomeUnchanged: the message already showed this content, so nothing
	// was sent (or Telegram said "not modified").
	OutcomeUnchanged
	// OutcomeSuperseded: a newer edit of the same message (or its deletion)
	// replaced this one before it was sent. Not a failure.
	OutcomeSuperseded
	// OutcomeReplaced: the edit target was gone or not editable, so the
	// content was sent as a new message; Result.MessageID is the new id and
	// the [Message] handle now points to it.
	OutcomeReplaced
	// OutcomeDeleted: the message was deleted (or was already gone).
	OutcomeDeleted
	// OutcomeSkipped: a typing action was not sent because one was sent
	// recently, a message made it moot, or it went stale.
	OutcomeSkipped
	// OutcomeGone: the edit target of a [Message.NoReplace] handle was gone
	// or not editable (the user deleted it), so nothing was sent; the handle
	// now counts as deleted and every later edit of it ends the same way.
	// Result.MessageID is the id the message had.
	OutcomeGone
)

var outcomeNames = [...]string{"", "sent", "edited", "unchanged", "superseded", "replaced", "deleted", "skipped", "gone"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Result is the successful outcome of an operation.
type Result struct {
	MessageID MessageID
	Outcome   Outcome
}

// Pending is the future outcome of one enqueued operation.
type Pending struct {
	done     chan struct{}
	resolved atomic.Bool
	res      Result
	err      error
	// after, set before the op is enqueued, runs once when p settles,
	// before Done is closed: it closes a media send's files.
	after func()
}

func newPending() *Pending { return &Pending{done: make(chan struct{})} }

func resolvedPending(res Result, err error) *Pending {
	p := newPending()
	p.resolve(res, err)
	return p
}

// resolve settles p once; later calls are ignored so that racing paths (a
// close and a completion) cannot panic on a double close.
func (p *Pending) resolve(res Result, err error) {
	if !p.resolved.CompareAndSwap(false, true) {
		return
	}
	p.res, p.err = res, err
	if p.after != nil {
		p.after()
	}
	close(p.done)
}

// Done is closed once the outcome is known.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait blocks until the outcome is known or ctx ends. Giving up waiting does
// not cancel the operation.
func (p *Pending) Wait(ctx context.Context) (Result, error) {
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("wait for outbox operation: %w", ctx.Err())
	}
}

// Peek returns the outcome if it is known; ok is false while pending.
func (p *Pending) Peek() (res Result, err error, ok bool) {
	select {
	case <-p.done:
		return p.res, p.err, true
	default:
		return Result{}, nil, false
	}
}

// Message is a handle on a message the outbox owns: it is created by
// [Outbox.Send] (before the message exists) or [Outbox.Adopt] (for an id known
// from before a restart), and is the target of [Outbox.Edit] and
// [Outbox.Delete]. Its id can change when an edit had to be replaced by a new
// message; [Options.OnReplaced] reports that, and [Message.NoReplace]
// prevents it.
type Message struct {
	key       ChatKey
	tag       string
	sent      *Pending
	id        atomic.Int64
	noReplace atomic.Bool // see NoReplace; set by the caller, read by workers

	// The fields below are guarded by the mutex of the chat worker that owns
	// key.Chat. Only one worker per chat exists at a time, and a worker only
	// retires when nothing refers to its queues, so the handle outlives it.
	pendingEdit  *op    // queued edit new edits coalesce into
	queuedSend   *op    // the message's send while it waits in a queue (not yet taken)
	shown        uint64 // content hash of what the message displays
	hasShown     bool
	unsent       error // the send failed permanently
	deleteQueued bool
	deleted      bool
	gone         bool // a NoReplace message an edit found gone (deleted is set too)
}

// NoReplace makes m a message that is only ever edited in place, and
// returns it. By default an edit whose target is gone (the user deleted
// it) or no longer editable sends its content as a new message
// ([OutcomeReplaced]), which is right for an answer or an approval the user
// must see; a message that only mirrors state (a control panel) must not
// come back uninvited once the user deleted it. Such an edit instead
// resolves with [OutcomeGone], sends nothing, and m counts as deleted: the
// caller learns from the outcome that the message is no more. Call it
// before the first edit of m.
func (m *Message) NoReplace() *Message {
	m.noReplace.Store(true)
	return m
}

// Key is the chat (and topic) the message lives in.
func (m *Message) Key() ChatKey { return m.key }

// ID is the Telegram message id, or 0 while the message is not sent yet (or
// is being re-sent after its edit target vanished).
func (m *Message) ID() MessageID { return MessageID(m.id.Load()) }

// Tag is the caller's label from [SendOptions.Tag].
func (m *Message) Tag() string { return m.tag }

// Sent resolves when the initial send finished. For adopted messages it is
// already resolved. A message deleted before its send went out is never
// sent: Sent then fails with ErrDeleted.
func (m *Message) Sent() *Pending { return m.sent }

// Dispatch describes one call as it goes to Telegram (see
// [Options.Dispatched]).
type Dispatch struct {
	Key      ChatKey
	Kind     string // "send", "edit" or "delete"
	Priority Priority
	Tag      string
	Text     string    // as queued (before any plain-text fallback or split)
	Queued   time.Time // when the op was first queued (a coalesced edit: its first version)
	Sent     time.Time // when the call is made
}

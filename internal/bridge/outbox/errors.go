package outbox

import (
	"errors"
	"fmt"
)

// ErrClosed is returned for operations enqueued after [Outbox.Close] began, and
// for operations still queued when Close gave up. Journaled sends among the
// latter stay in the journal for [Outbox.Restore].
var ErrClosed = errors.New("outbox closed")

// ErrDeleted is returned for an edit or delete of a [Message] that has been
// deleted (or whose deletion is queued).
var ErrDeleted = errors.New("message deleted")

// ErrInvalid is returned for an operation that Telegram would reject anyway
// (empty text, zero chat id, a keyboard that cannot be marshalled), so it is
// failed at once instead of costing a request.
var ErrInvalid = errors.New("invalid outbox operation")

// BlockedError means Telegram answered 403 Forbidden for the chat: the bot was
// blocked by the user, kicked from the group, or lacks rights. The outbox
// fails the operation and everything queued for the chat, and fails new
// operations for the chat without calling Telegram until the cooldown in
// [Options.ForbiddenCooldown] passes or [Outbox.Unblock] is called.
type BlockedError struct {
	Chat int64
	Err  error // the library error; errors.Is(err, bot.ErrorForbidden) holds
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("telegram chat %d is unavailable: %v", e.Chat, e.Err)
}

func (e *BlockedError) Unwrap() error { return e.Err }

// MigratedError means the group was upgraded to a supergroup with a new id.
// The outbox treats the old chat like a blocked one; the bridge should remap
// the chat to NewChat and enqueue there.
type MigratedError struct {
	Chat    int64
	NewChat int64
	Err     error // the *bot.MigrateError
}

func (e *MigratedError) Error() string {
	return fmt.Sprintf("telegram chat %d migrated to %d", e.Chat, e.NewChat)
}

func (e *MigratedError) Unwrap() error { return e.Err }

// UnsentError is returned for an edit or delete whose [Message] was never
// sent because its send failed permanently.
type UnsentError struct {
	Err error // why the send failed
}

func (e *UnsentError) Error() string {
	return fmt.Sprintf("message was never sent: %v", e.Err)
}

func (e *UnsentError) Unwrap() error { return e.Err }

// UnflushedError is returned by [Outbox.Close] when its deadline passed before
// every queued operation was delivered.
type UnflushedError struct {
	Ops []UnflushedOp
	// Stuck counts the chats whose worker was still in a call when Close
	// gave up on it (see [CloseGrace]); what it held is not in Ops, and
	// its journaled sends stay journaled.
	Stuck int
	Cause error // the Close context's error
}

// UnflushedOp describes one operation Close could not deliver. Operations with
// a non-zero Journal id are still in the journal and will be replayed.
type UnflushedOp struct {
	Key      ChatKey
	Kind     string // "send", "edit" or "delete"
	Priority Priority
	Tag      string
	Journal  JournalID
}

func (e *UnflushedError) Error() string {
	var journaled int
	for _, op := range e.Ops {
		if op.Journal != 0 {
			journaled++
		}
	}
	stuck := ""
	if e.Stuck > 0 {
		stuck = fmt.Sprintf(", %d chats given up on in a call that did not stop", e.Stuck)
	}
	return fmt.Sprintf("outbox closed with %d operations undelivered (%d journaled%s): %v",
		len(e.Ops), journaled, stuck, e.Cause)
}

func (e *UnflushedError) Unwrap() error { return e.Cause }

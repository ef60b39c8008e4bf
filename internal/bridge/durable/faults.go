package durable

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
)

// When the state store refuses writes (the disk is full, the file system
// went read-only), the daemon goes on: answers still arrive, since the
// outbox sends what it could not journal. Each kind of failed write is
// logged once per episode, with the database path and the free space; each
// chat it puts at risk gets one notice saying what a restart would lose;
// the refused writes are kept (writes.go) and done again every
// stateRetryEvery, or at once when another write gets through. When the
// kept writes are all done the episode ends: the recovery is logged and
// the notices are deleted.

// stateRetryEvery is how often kept writes are tried again while the
// storage refuses them: cheap (one small write), and it bounds how long a
// notice outlives the fault when nothing else writes.
const stateRetryEvery = time.Second

// faultEpisode is one stretch of refused writes.
type faultEpisode struct {
	since  time.Time
	cause  error                                // the first refusal, for the notices
	logged map[writeKind]bool                   // kinds logged so far
	chats  map[state.ChatKey]map[writeKind]bool // chats at risk, and what they risk
}

// stateNotice is a chat's "could not save state" message, guarded by
// Writes.mu; only the chat's actor sends, edits and deletes it.
type stateNotice struct {
	msg  *outbox.Message
	text string
}

// failedLocked records a refused write and returns what to do once the
// lock is released: log the kind the first time, and refresh the notices
// of the chats it puts at risk.
func (w *Writes) failedLocked(ctx context.Context, op writeOp, err error) (report func()) {
	ep := w.episode
	started := ep == nil
	if started {
		ep = &faultEpisode{since: time.Now(), cause: err, logged: map[writeKind]bool{}, chats: map[state.ChatKey]map[writeKind]bool{}}
		w.episode = ep
	}
	firstOfKind := !ep.logged[op.kind]
	ep.logged[op.kind] = true
	var keys []state.ChatKey
	if k, ok := chatKeyFrom(ctx); op.key != nil || ok {
		if op.key != nil {
			k = *op.key
		}
		keys = []state.ChatKey{k}
	} else if op.kind == kindUpdates {
		// The offset and kept messages: whoever has work in flight. Other
		// writes of no chat (CLI processes, the scheduler's) are logged
		// only: no chat's user can act on them.
		keys = w.chats.Busy()
	}
	var changed []state.ChatKey
	for _, k := range keys {
		kinds := ep.chats[k]
		if kinds == nil {
			kinds = map[writeKind]bool{}
			ep.chats[k] = kinds
		}
		if !kinds[op.kind] {
			kinds[op.kind] = true
			changed = append(changed, k)
		}
	}
	runCtx, watch, since := w.ctx, w.watch, ep.since
	return func() {
		watch.WriteRefused(string(op.kind))
		if firstOfKind {
			w.logRefused(op.kind, err)
		}
		if started {
			watch.Refusing(err, since)
			go w.retryLoop(runCtx)
		}
		for _, k := range changed {
			w.chats.Refresh(k)
		}
	}
}

func (w *Writes) logRefused(kind writeKind, err error) {
	ev := w.log.Error().Err(err).Str("kind", string(kind)).Str("path", w.Path()).Str("at_risk", kind.risk())
	if free, ferr := w.FreeBytes(); ferr == nil {
		ev = ev.Uint64("free_bytes", free)
	} else {
		ev = ev.AnErr("free_bytes_error", ferr)
	}
	ev.Msg("could not save state; answers still go out, and the write is done again once the disk takes it (logged once per kind until then)")
}

// retrySoon wakes the retry loop: a write just got through.
func (w *Writes) retrySoon() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// retryLoop runs while an episode lasts: it does the kept writes again
// until they all get through, then ends the episode.
func (w *Writes) retryLoop(ctx context.Context) {
	tick := time.NewTicker(stateRetryEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-w.kick:
		}
		if w.retryKept() {
			return
		}
	}
}

// retryKept does the kept writes in order; it stops at the first the
// storage still refuses. When none is left it ends the episode and
// reports whether it did.
func (w *Writes) retryKept() (recovered bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.mu.Lock()
	done := 0
	for len(w.kept) > 0 {
		k := w.kept[0]
		err := k.do(ctx)
		if errors.Is(err, state.ErrStorage) {
			w.mu.Unlock()
			return false
		}
		if err != nil {
			// The world moved on while it waited (an ack of an entry
			// already gone, an approval decided meanwhile).
			w.log.Debug().Err(err).Str("kind", string(k.op.kind)).Msg("drop a kept state write that no longer applies")
		}
		w.kept = w.kept[1:]
		if w.bySlot[k.op.slot]--; w.bySlot[k.op.slot] <= 0 {
			delete(w.bySlot, k.op.slot)
		}
		done++
	}
	ep := w.episode
	w.episode = nil
	watch := w.watch
	w.mu.Unlock()
	if ep == nil {
		return true
	}
	watch.Saved()
	w.log.Info().Dur("after", time.Since(ep.since).Round(time.Millisecond)).Int("writes_done_again", done).
		Strs("kinds", kindNames(ep.logged)).Str("path", w.Path()).Msg("state is saved again")
	for k := range ep.chats {
		w.chats.Refresh(k)
	}
	return true
}

// noticeTextLocked is what chat key's notice should say now: "" when no
// episode puts it at risk.
func (w *Writes) noticeTextLocked(key state.ChatKey) string {
	ep := w.episode
	if ep == nil || len(ep.chats[key]) == 0 {
		return ""
	}
	var risks []string
	for _, k := range slices.Sorted(maps.Keys(ep.chats[key])) {
		risks = append(risks, k.risk())
	}
	return "⚠️ untether could not save state (" + causeText(ep.cause) + "); answers still arrive, but a restart now may lose " +
		strings.Join(risks, "; ") + ". This notice goes away by itself once saving works again."
}

func causeText(err error) string {
	switch {
	case errors.Is(err, state.ErrDiskFull):
		return "the disk is full"
	case errors.Is(err, state.ErrReadOnly):
		return "the file system is read-only"
	}
	return "the disk refuses writes"
}

// risk says, for a chat's user, what a restart loses while writes of the
// kind wait.
func (k writeKind) risk() string {
	switch k {
	case kindUpdates:
		return "which messages were already answered (one could be answered again, or one not yet answered be dropped)"
	case kindChat:
		return "which conversation this chat continues"
	case kindLive:
		return "the “interrupted” mark on the progress message of a running turn"
	case kindOutbox:
		return "answers not delivered yet"
	case kindApproval:
		return "the record of approval requests and decisions"
	case kindTurn:
		return "the cost and turn counts shown by /status"
	case kindProcess:
		return "the list of Claude processes to clean up after a crash"
	case kindSchedule:
		return "which scheduled prompts and retries already ran (one could run again)"
	case kindSettings:
		return "recent changes of settings"
	case kindTrigger:
		return "which webhook prompts already ran (one could run again)"
	}
	return string(k)
}

func kindNames(m map[writeKind]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	slices.Sort(out)
	return out
}

// SyncNotice sends, edits or deletes chat key's state notice (its chat to
// out is to) so it says what the episode puts at risk, or is gone when
// nothing is. It runs on the chat's actor, which alone sends, edits and
// deletes the notice.
func (w *Writes) SyncNotice(ctx context.Context, out *outbox.Outbox, key state.ChatKey, to outbox.ChatKey) {
	w.mu.Lock()
	want := w.noticeTextLocked(key)
	n := w.notices[key]
	w.mu.Unlock()
	switch {
	case n == nil && want == "":
		return
	case n == nil:
		// Outside the lock: journaling it is itself a state write.
		msg := out.Send(ctx, to, outbox.High, outbox.Content{Text: want},
			outbox.SendOptions{Silent: true, Tag: "state-notice"})
		w.mu.Lock()
		w.notices[key] = &stateNotice{msg: msg, text: want}
		w.mu.Unlock()
	case want == "":
		w.mu.Lock()
		delete(w.notices, key)
		w.mu.Unlock()
		out.Delete(ctx, n.msg, outbox.High) // the all-clear is news too
	case want != n.text:
		w.mu.Lock()
		n.text = want
		w.mu.Unlock()
		out.Edit(ctx, n.msg, outbox.High, outbox.Content{Text: want})
	}
}

// WithdrawNotices deletes every state notice when the daemon stops. The
// next run could not delete them (the disk that refused writes could not
// record their ids), and shows its own if the fault lasts.
func (w *Writes) WithdrawNotices(ctx context.Context, out *outbox.Outbox) {
	w.mu.Lock()
	notices := slices.Collect(maps.Values(w.notices))
	clear(w.notices)
	w.mu.Unlock()
	for _, n := range notices {
		out.Delete(ctx, n.msg, outbox.High)
	}
}

// SaveKept tries the kept writes a last time when the daemon stops, and
// logs what is lost if the disk still refuses them.
func (w *Writes) SaveKept() {
	if w.retryKept() {
		return
	}
	w.mu.Lock()
	n := len(w.kept)
	kinds := map[writeKind]bool{}
	for _, k := range w.kept {
		kinds[k.op.kind] = true
	}
	w.mu.Unlock()
	w.log.Error().Int("writes", n).Strs("kinds", kindNames(kinds)).Str("path", w.Path()).
		Msg("stopping with state writes the disk refused; what they carried is lost")
}

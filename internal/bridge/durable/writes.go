package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/state"
)

// Writes is the state store as the bridge writes to it. A write the
// storage refuses (state.ErrStorage: a full disk, a read-only file system)
// does not fail the caller: it is kept in memory, in order, and written
// again once the storage takes writes (faults.go runs that), so the
// chat goes on and nothing is lost unless the daemon stops first. Writes
// to a slot (one chat's record, one live message, one approval) that has
// kept writes waiting are kept behind them, so their order holds; a write
// that replaces what its slot holds (PutChat, SetLastUpdateID, AddLive and
// RemoveLive) drops the older kept ones instead.
//
// Reads, and the writes the bridge makes only at start-up, go straight to
// the embedded store.
type Writes struct {
	*state.Store
	log   zerolog.Logger
	chats Chats

	mu      sync.Mutex
	kept    []*keptWrite
	bySlot  map[string]int // kept writes per slot
	episode *faultEpisode  // nil while writes work (state_faults.go)
	notices map[state.ChatKey]*stateNotice
	ctx     context.Context // bounds the retry loop; set by Run
	kick    chan struct{}   // a write worked: retry the kept ones now
	watch   Watcher         // hears of refusals and recoveries (SetWatcher); never nil
}

// writeKind groups writes by what a restart would lose without them; a
// failure is logged once per kind.
type writeKind string

const (
	kindUpdates  writeKind = "updates"  // offset, handled ids, messages kept until handled
	kindChat     writeKind = "chat"     // session id and settings
	kindLive     writeKind = "live"     // progress messages to mark after a restart
	kindOutbox   writeKind = "outbox"   // answers journaled until delivered
	kindApproval writeKind = "approval" // approval log
	kindTurn     writeKind = "turn"     // turn statistics
	kindProcess  writeKind = "process"  // CLI processes to clean up after a crash
	kindSchedule writeKind = "schedule" // schedules, retries after a limit, limit windows, lost wake-ups
	kindSettings writeKind = "settings" // chat and daemon settings
	kindTrigger  writeKind = "trigger"  // webhook runs waiting, deliveries seen (triggers.go)
)

// writeOp describes one write for the bookkeeping.
type writeOp struct {
	kind writeKind
	slot string
	key  *state.ChatKey // the chat it belongs to, when the write names one
	// replaces: this write makes the slot's older kept writes moot.
	replaces bool
	// once: it cannot be kept (its result is needed now); a failure is
	// reported and a probe is kept in its place, so the episode lasts
	// until the storage takes writes.
	once bool
}

// keptWrite is a refused write waiting to be done again.
type keptWrite struct {
	op writeOp
	do func(context.Context) error
}

// maxKeptWrites bounds memory on a disk that stays full for days: about
// one kept write per turn, so this is thousands of turns.
const maxKeptWrites = 10000

// Chats is what the writes need to know of the chats: which have work in
// flight (a refused offset write puts their messages at risk), and how to
// have one bring its notice in step (Writes.SyncNotice, on its actor).
type Chats interface {
	Busy() []state.ChatKey
	Refresh(key state.ChatKey)
}

// New wraps s; log gets one line per kind of refused write.
func New(s *state.Store, log zerolog.Logger, chats Chats) *Writes {
	return &Writes{Store: s, log: log, chats: chats, bySlot: map[string]int{}, notices: map[state.ChatKey]*stateNotice{},
		ctx: context.Background(), kick: make(chan struct{}, 1), watch: noWatcher{}}
}

// Bind sets the context that ends the retry loop (the bridge's run).
func (w *Writes) Bind(ctx context.Context) {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
}

// write runs do for op unless its slot has kept writes waiting (it is kept
// behind them). A refused write is kept, reported, and reads as done.
func (w *Writes) write(ctx context.Context, op writeOp, do func(context.Context) error) error {
	w.mu.Lock()
	if !op.replaces && !op.once && w.bySlot[op.slot] > 0 {
		w.keepLocked(op, do)
		w.mu.Unlock()
		return nil
	}
	err := do(ctx)
	if op.replaces && (err == nil || errors.Is(err, state.ErrStorage)) {
		w.dropSlotLocked(op.slot)
	}
	if err == nil || !errors.Is(err, state.ErrStorage) {
		inEpisode := w.episode != nil
		w.mu.Unlock()
		if err == nil && inEpisode {
			w.retrySoon()
		}
		return err
	}
	if op.once {
		w.keepLocked(writeOp{kind: op.kind, slot: "probe", replaces: true}, w.Store.CheckWritable)
	} else {
		w.keepLocked(op, do)
	}
	report := w.failedLocked(ctx, op, err)
	w.mu.Unlock()
	report()
	if op.once {
		return err
	}
	return nil
}

func (w *Writes) keepLocked(op writeOp, do func(context.Context) error) {
	if op.replaces {
		w.dropSlotLocked(op.slot)
	}
	if len(w.kept) >= maxKeptWrites {
		dropped := w.kept[0]
		w.kept = w.kept[1:]
		w.bySlot[dropped.op.slot]--
		w.log.Error().Str("kind", string(dropped.op.kind)).Int("kept", len(w.kept)).
			Msg("too many state writes wait for the disk; dropping the oldest")
	}
	w.kept = append(w.kept, &keptWrite{op: op, do: do})
	w.bySlot[op.slot]++
}

func (w *Writes) dropSlotLocked(slot string) {
	if w.bySlot[slot] == 0 {
		return
	}
	kept := w.kept[:0]
	for _, k := range w.kept {
		if k.op.slot != slot {
			kept = append(kept, k)
		}
	}
	clear(w.kept[len(kept):])
	w.kept = kept
	delete(w.bySlot, slot)
}

// The bridge's writes. Each names its kind, its slot and, where it has
// one, its chat.

func chatSlot(k state.ChatKey) string { return "chat:" + k.String() }

func (w *Writes) PutChat(ctx context.Context, c state.Chat) error {
	return w.write(ctx, writeOp{kind: kindChat, slot: chatSlot(c.Key), key: &c.Key, replaces: true},
		func(ctx context.Context) error { return w.Store.PutChat(ctx, c) })
}

func (w *Writes) ForgetSession(ctx context.Context, key state.ChatKey) error {
	return w.write(ctx, writeOp{kind: kindChat, slot: chatSlot(key), key: &key},
		func(ctx context.Context) error { return w.Store.ForgetSession(ctx, key) })
}

func (w *Writes) MigrateChat(ctx context.Context, from, to state.ChatID) error {
	key := state.ChatKey{Chat: to}
	return w.write(ctx, writeOp{kind: kindChat, slot: "migrate", key: &key, once: true},
		func(ctx context.Context) error { return w.Store.MigrateChat(ctx, from, to) })
}

func (w *Writes) RecordTurn(ctx context.Context, rec state.TurnRecord) error {
	if rec.StartedAt.IsZero() { // fixed now, not when a kept write is done
		rec.StartedAt = time.Now().Add(-rec.Duration)
	}
	return w.write(ctx, writeOp{kind: kindTurn, slot: fmt.Sprintf("turn:%s:%d", rec.Key, rec.StartedAt.UnixNano()), key: &rec.Key},
		func(ctx context.Context) error { return w.Store.RecordTurn(ctx, rec) })
}

func liveSlot(key state.ChatKey, id state.MessageID) string {
	return "live:" + strconv.FormatInt(int64(key.Chat), 10) + ":" + strconv.Itoa(int(id))
}

func (w *Writes) AddLive(ctx context.Context, m state.LiveMessage) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	return w.write(ctx, writeOp{kind: kindLive, slot: liveSlot(m.Key, m.MessageID), key: &m.Key, replaces: true},
		func(ctx context.Context) error { return w.Store.AddLive(ctx, m) })
}

func (w *Writes) RemoveLive(ctx context.Context, key state.ChatKey, id state.MessageID) error {
	return w.write(ctx, writeOp{kind: kindLive, slot: liveSlot(key, id), key: &key, replaces: true},
		func(ctx context.Context) error { return w.Store.RemoveLive(ctx, key, id) })
}

func approvalSlot(token string) string { return "approval:" + token }

func (w *Writes) PutApproval(ctx context.Context, a state.Approval) error {
	return w.write(ctx, writeOp{kind: kindApproval, slot: approvalSlot(a.Token), key: &a.Key},
		func(ctx context.Context) error { return w.Store.PutApproval(ctx, a) })
}

func (w *Writes) SetApprovalMessage(ctx context.Context, token string, id state.MessageID) error {
	return w.write(ctx, writeOp{kind: kindApproval, slot: approvalSlot(token)},
		func(ctx context.Context) error { return w.Store.SetApprovalMessage(ctx, token, id) })
}

func (w *Writes) DecideApproval(ctx context.Context, token string, d state.Decision, by state.UserID, at time.Time, note string) error {
	if at.IsZero() {
		at = time.Now()
	}
	return w.write(ctx, writeOp{kind: kindApproval, slot: approvalSlot(token)},
		func(ctx context.Context) error { return w.Store.DecideApproval(ctx, token, d, by, at, note) })
}

func (w *Writes) ContinueApproval(ctx context.Context, token string) (bool, error) {
	var ok bool
	err := w.write(ctx, writeOp{kind: kindApproval, slot: approvalSlot(token), once: true},
		func(ctx context.Context) (err error) {
			ok, err = w.Store.ContinueApproval(ctx, token)
			return err
		})
	return ok, err
}

func (w *Writes) SetLastUpdateID(ctx context.Context, id int64) error {
	return w.write(ctx, writeOp{kind: kindUpdates, slot: "offset", replaces: true},
		func(ctx context.Context) error { return w.Store.SetLastUpdateID(ctx, id) })
}

func (w *Writes) MarkUpdateHandled(ctx context.Context, id int64) error {
	return w.write(ctx, writeOp{kind: kindUpdates, slot: "handled:" + strconv.FormatInt(id, 10), replaces: true},
		func(ctx context.Context) error { return w.Store.MarkUpdateHandled(ctx, id) })
}

func deferSlot(id int64) string { return "defer:" + strconv.FormatInt(id, 10) }

func (w *Writes) DeferUpdate(ctx context.Context, u state.DeferredUpdate) error {
	return w.write(ctx, writeOp{kind: kindUpdates, slot: deferSlot(u.UpdateID), replaces: true},
		func(ctx context.Context) error { return w.Store.DeferUpdate(ctx, u) })
}

// DeferUpdateOnDisk is DeferUpdate that also reports whether the update is
// on disk now. When the store refuses it, it is kept in memory like any
// refused write (written once the disk takes it), and onDisk is false:
// lost if the daemon stops first, so nothing may be promised on it.
func (w *Writes) DeferUpdateOnDisk(ctx context.Context, u state.DeferredUpdate) (onDisk bool, err error) {
	var written atomic.Bool // a retry of the kept write may set it later, off this goroutine
	err = w.write(ctx, writeOp{kind: kindUpdates, slot: deferSlot(u.UpdateID), replaces: true},
		func(ctx context.Context) error {
			err := w.Store.DeferUpdate(ctx, u)
			if err == nil {
				written.Store(true)
			}
			return err
		})
	return written.Load(), err
}

func (w *Writes) ForgetDeferredUpdate(ctx context.Context, id int64) error {
	return w.write(ctx, writeOp{kind: kindUpdates, slot: deferSlot(id), replaces: true},
		func(ctx context.Context) error { return w.Store.ForgetDeferredUpdate(ctx, id) })
}

// EnqueueOutbox journals a send. A refused one is not kept (the outbox
// needs its id now): it reads as "not journaled" (id 0, no error), which
// the outbox handles by sending anyway, unjournaled.
func (w *Writes) EnqueueOutbox(ctx context.Context, it state.OutboxItem) (int64, error) {
	var id int64
	err := w.write(ctx, writeOp{kind: kindOutbox, slot: "enqueue", key: &it.Key, once: true},
		func(ctx context.Context) (err error) {
			id, err = w.Store.EnqueueOutbox(ctx, it)
			return err
		})
	if errors.Is(err, state.ErrStorage) {
		return 0, nil
	}
	return id, err
}

func (w *Writes) AckOutbox(ctx context.Context, id int64) error {
	return w.write(ctx, writeOp{kind: kindOutbox, slot: "ack:" + strconv.FormatInt(id, 10), replaces: true},
		func(ctx context.Context) error { return w.Store.AckOutbox(ctx, id) })
}

func procSlot(tag string) string { return "proc:" + tag }

func (w *Writes) PutCLIProc(ctx context.Context, p state.CLIProc) error {
	if p.StartedAt.IsZero() {
		p.StartedAt = time.Now()
	}
	return w.write(ctx, writeOp{kind: kindProcess, slot: procSlot(p.Tag), replaces: true},
		func(ctx context.Context) error { return w.Store.PutCLIProc(ctx, p) })
}

func (w *Writes) DeleteCLIProc(ctx context.Context, tag string) error {
	return w.write(ctx, writeOp{kind: kindProcess, slot: procSlot(tag), replaces: true},
		func(ctx context.Context) error { return w.Store.DeleteCLIProc(ctx, tag) })
}

// Writes whose result the caller needs now (a compare-and-set, a new id)
// are not kept: a refusal is reported (logged once, a notice) and returned,
// and the caller says so or tries again itself.

func (w *Writes) once(ctx context.Context, kind writeKind, do func(context.Context) error) error {
	return w.write(ctx, writeOp{kind: kind, slot: "once", once: true}, do)
}

func (w *Writes) PutLimitWindows(ctx context.Context, ws []state.LimitWindow) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.PutLimitWindows(ctx, ws) })
}

func (w *Writes) PutRetry(ctx context.Context, r state.Retry) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.PutRetry(ctx, r) })
}

func (w *Writes) SetRetryMessage(ctx context.Context, token string, id state.MessageID) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.SetRetryMessage(ctx, token, id) })
}

func (w *Writes) DecideRetry(ctx context.Context, token string, to state.RetryState, by state.UserID, from ...state.RetryState) (ok bool, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		ok, err = w.Store.DecideRetry(ctx, token, to, by, from...)
		return err
	})
	return ok, err
}

func (w *Writes) AddSchedule(ctx context.Context, sc state.Schedule, max int) (id int64, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		id, err = w.Store.AddSchedule(ctx, sc, max)
		return err
	})
	return id, err
}

func (w *Writes) DeleteSchedule(ctx context.Context, key state.ChatKey, id int64) (ok bool, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		ok, err = w.Store.DeleteSchedule(ctx, key, id)
		return err
	})
	return ok, err
}

func (w *Writes) AdvanceSchedule(ctx context.Context, id int64, due, next, ran time.Time) (ok bool, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		ok, err = w.Store.AdvanceSchedule(ctx, id, due, next, ran)
		return err
	})
	return ok, err
}

func (w *Writes) FinishScheduleRun(ctx context.Context, id int64, due time.Time) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.FinishScheduleRun(ctx, id, due) })
}

func (w *Writes) PutLostWakeup(ctx context.Context, lw state.LostWakeup) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.PutLostWakeup(ctx, lw) })
}

func (w *Writes) OfferLostWakeup(ctx context.Context, token, why string) (ok bool, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		ok, err = w.Store.OfferLostWakeup(ctx, token, why)
		return err
	})
	return ok, err
}

func (w *Writes) ForgetPendingWakeup(ctx context.Context, token string) error {
	return w.write(ctx, writeOp{kind: kindSchedule, slot: "wakeup:" + token},
		func(ctx context.Context) error { return w.Store.ForgetPendingWakeup(ctx, token) })
}

func (w *Writes) RearmLostWakeup(ctx context.Context, token string, by state.UserID) (ok bool, err error) {
	err = w.once(ctx, kindSchedule, func(ctx context.Context) (err error) {
		ok, err = w.Store.RearmLostWakeup(ctx, token, by)
		return err
	})
	return ok, err
}

func (w *Writes) SyncConfigSchedules(ctx context.Context, entries []state.Schedule) error {
	return w.once(ctx, kindSchedule, func(ctx context.Context) error { return w.Store.SyncConfigSchedules(ctx, entries) })
}

func (w *Writes) SetSetting(ctx context.Context, name, value string) error {
	return w.once(ctx, kindSettings, func(ctx context.Context) error { return w.Store.SetSetting(ctx, name, value) })
}

func (w *Writes) SwapSetting(ctx context.Context, name, value string) (changed bool, err error) {
	err = w.once(ctx, kindSettings, func(ctx context.Context) (err error) {
		changed, err = w.Store.SwapSetting(ctx, name, value)
		return err
	})
	return changed, err
}

// chatKeyCtx carries the chat a write is made for (chat.ctx sets it), for
// writes that name only a token or an id.
type chatKeyCtx struct{}

func WithChatKey(ctx context.Context, key state.ChatKey) context.Context {
	return context.WithValue(ctx, chatKeyCtx{}, key)
}

func chatKeyFrom(ctx context.Context) (state.ChatKey, bool) {
	k, ok := ctx.Value(chatKeyCtx{}).(state.ChatKey)
	return k, ok
}

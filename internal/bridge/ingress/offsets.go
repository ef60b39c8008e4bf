package ingress

import (
	"context"
	"sort"
	"sync"
)

// OffsetStore is the slice of the state store Offsets needs.
type OffsetStore interface {
	SetLastUpdateID(ctx context.Context, id int64) error
	MarkUpdateHandled(ctx context.Context, id int64) error
}

// Offsets decides which update ids count as handled. Chats handle
// updates concurrently, so an update is confirmed to Telegram (via the
// persisted offset) only when every earlier one is done too; ids done
// beyond that watermark are remembered, so a restart that receives them
// again drops them instead of handling them twice.
type Offsets struct {
	store OffsetStore

	mu       sync.Mutex
	offset   int64              // every update <= offset is handled
	inflight map[int64]struct{} // routed, not yet done
	done     map[int64]struct{} // done, above offset
}

func NewOffsets(store OffsetStore, offset int64, handledAbove []int64) *Offsets {
	t := &Offsets{store: store, offset: offset, inflight: map[int64]struct{}{}, done: map[int64]struct{}{}}
	for _, id := range handledAbove {
		t.done[id] = struct{}{}
	}
	return t
}

// begin registers an update; it reports false for one already handled or
// in flight (a redelivery), which must be dropped.
func (t *Offsets) Begin(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id <= t.offset {
		return false
	}
	if _, ok := t.done[id]; ok {
		return false
	}
	if _, ok := t.inflight[id]; ok {
		return false
	}
	t.inflight[id] = struct{}{}
	return true
}

// finish marks an update handled and persists what changed.
func (t *Offsets) Finish(ctx context.Context, id int64) error {
	newOffset, advanced, keep := t.markDone(id)
	if keep {
		if err := t.store.MarkUpdateHandled(ctx, id); err != nil {
			return err
		}
	}
	if advanced {
		return t.store.SetLastUpdateID(ctx, newOffset)
	}
	return nil
}

// skip marks an update handled in memory only, for updates that are
// dropped unseen (strangers): the watermark moves, and is persisted with
// the next update finished normally. After a crash a skipped update may
// come again, and is skipped again.
func (t *Offsets) Skip(id int64) { t.markDone(id) }

// markDone records id as done and advances the watermark; it reports the
// new watermark, whether it moved, and whether id stays above it.
func (t *Offsets) markDone(id int64) (newOffset int64, advanced, keep bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.inflight, id)
	t.done[id] = struct{}{}
	// Advance the watermark over the contiguous run of done ids. Telegram's
	// ids are increasing but not necessarily contiguous, so the watermark
	// may move up to (but not past) the lowest id still in flight.
	lowest := int64(-1)
	for in := range t.inflight {
		if lowest < 0 || in < lowest {
			lowest = in
		}
	}
	var ids []int64
	for d := range t.done {
		ids = append(ids, d)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	newOffset = t.offset
	for _, d := range ids {
		if lowest >= 0 && d > lowest {
			break
		}
		newOffset = d
		delete(t.done, d)
	}
	advanced = newOffset > t.offset
	t.offset = newOffset
	return newOffset, advanced, id > newOffset
}

// current returns the watermark.
func (t *Offsets) Current() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.offset
}

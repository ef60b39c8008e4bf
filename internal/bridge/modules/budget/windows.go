package budget

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

// windowCache is what the store holds of the subscription windows, so that
// an answer's window warning (windowWarning) costs no query on the actor
// before the answer is sent. This module is the store's only writer of
// them (onRateLimit), so after one read at the first use what it wrote is
// what the store holds; a write that failed makes the next read ask the
// store again. The windows are the account's, read and written by every
// chat's actor: hence the locks.
type windowCache struct {
	// writeMu makes one put at a time, so that the cache takes writes in
	// the order the store committed them. A put updates the cache after
	// its write, under mu, so a first read racing it ends up with the write
	// either way.
	writeMu sync.Mutex
	mu      sync.Mutex // the fields below
	known   bool
	byType  map[string]state.LimitWindow
}

// get returns the windows by type, as the store's LimitWindows does.
func (w *windowCache) get(ctx context.Context, st store) ([]state.LimitWindow, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.known {
		ws, err := st.LimitWindows(ctx)
		if err != nil {
			return nil, err
		}
		w.byType = make(map[string]state.LimitWindow, len(ws))
		for _, x := range ws {
			w.byType[x.Type] = x
		}
		w.known = true
	}
	var out []state.LimitWindow // nil when none, as the store answers
	for _, x := range w.byType {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b state.LimitWindow) int { return cmp.Compare(a.Type, b.Type) })
	return out, nil
}

// put writes ws to the store and notes them as the store now holds them.
func (w *windowCache) put(ctx context.Context, st store, ws []state.LimitWindow) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	err := st.PutLimitWindows(ctx, ws)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.known = false
		return err
	}
	if !w.known {
		return nil // the first read loads them with the rest
	}
	for _, x := range ws {
		x.ResetsAt, x.UpdatedAt = stored(x.ResetsAt), stored(x.UpdatedAt)
		w.byType[x.Type] = x
	}
	return nil
}

// stored is t as the store gives it back: UTC, to the nanosecond, without
// a monotonic reading.
func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

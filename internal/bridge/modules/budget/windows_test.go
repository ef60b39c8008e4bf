package budget

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func openStore(t *testing.T) *state.Store {
	t.Helper()
	s, err := state.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The cache answers what the store would: the windows written before its
// first read, and every write through it since, in the store's order and
// shape (UTC, no monotonic reading).
func TestWindowCacheAnswersAsTheStore(t *testing.T) {
	ctx := context.Background()
	local := time.FixedZone("X", 3600)
	now := time.Now().In(local) // with a monotonic reading, not UTC
	tests := []struct {
		name   string
		before []state.LimitWindow // written to the store directly, before the first read
		puts   [][]state.LimitWindow
	}{
		{name: "nothing known"},
		{name: "known before the start", before: []state.LimitWindow{
			{Type: "seven_day", Status: "allowed", Utilization: 0.4, ResetsAt: now.Add(48 * time.Hour), UpdatedAt: now},
			{Type: "five_hour", Status: "allowed_warning", Utilization: 0.8, ResetsAt: now.Add(time.Hour), UpdatedAt: now}}},
		{name: "written through the cache", puts: [][]state.LimitWindow{
			{{Type: "five_hour", Status: "allowed", Utilization: 0.1, ResetsAt: now.Add(time.Hour), UpdatedAt: now}},
			{{Type: "seven_day", Status: "allowed", Utilization: 0.72, ResetsAt: now.Add(24 * time.Hour), UpdatedAt: now.Add(time.Second)},
				{Type: "five_hour", Status: "rejected", ResetsAt: time.Time{}, UpdatedAt: now.Add(time.Second)}}}},
		{name: "both", before: []state.LimitWindow{{Type: "seven_day_opus", Status: "allowed", Utilization: 0.9, UpdatedAt: now}},
			puts: [][]state.LimitWindow{{{Type: "seven_day_opus", Status: "allowed", Utilization: 0.95, UpdatedAt: now.Add(time.Minute)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			require.NoError(t, st.PutLimitWindows(ctx, tc.before))
			var w windowCache
			got, err := w.get(ctx, st)
			require.NoError(t, err)
			want, err := st.LimitWindows(ctx)
			require.NoError(t, err)
			assert.Equal(t, want, got, "first read")
			for i, ws := range tc.puts {
				require.NoError(t, w.put(ctx, st, ws))
				got, err := w.get(ctx, st)
				require.NoError(t, err)
				want, err := st.LimitWindows(ctx)
				require.NoError(t, err)
				assert.Equal(t, want, got, "after write %d", i)
			}
		})
	}
}

// A write the store refused leaves the cache asking the store again.
func TestWindowCacheForgetsOnAFailedWrite(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var w windowCache
	_, err := w.get(ctx, st)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.Error(t, w.put(cancelled, st, []state.LimitWindow{{Type: "five_hour", Status: "allowed", Utilization: 0.9}}))
	// Written behind the cache's back: only a read of the store sees it.
	require.NoError(t, st.PutLimitWindows(ctx, []state.LimitWindow{{Type: "seven_day", Status: "allowed", Utilization: 0.3}}))
	got, err := w.get(ctx, st)
	require.NoError(t, err)
	want, err := st.LimitWindows(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	require.Len(t, got, 1)
	assert.Equal(t, "seven_day", got[0].Type)
}

// Chats write and read the windows at once (each on its actor): whatever
// the interleaving, the cache ends as the store.
func TestWindowCacheUnderConcurrentChats(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var w windowCache
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				ws := []state.LimitWindow{{Type: fmt.Sprintf("w%d", i%3), Status: "allowed",
					Utilization: float64(g*100+i) / 1000, UpdatedAt: time.Now()}}
				if g%2 == 0 {
					assert.NoError(t, w.put(ctx, st, ws))
				} else {
					_, err := w.get(ctx, st)
					assert.NoError(t, err)
				}
			}
		}()
	}
	wg.Wait()
	got, err := w.get(ctx, st)
	require.NoError(t, err)
	want, err := st.LimitWindows(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

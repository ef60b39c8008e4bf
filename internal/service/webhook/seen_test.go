package webhook

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func claim(t *testing.T, s *MemorySeen, key string, at time.Time) bool {
	t.Helper()
	ok, err := s.Claim(context.Background(), key, at)
	require.NoError(t, err)
	return ok
}

func TestMemorySeenWindow(t *testing.T) {
	s := NewMemorySeen(time.Hour, 100)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	assert.True(t, claim(t, s, "a", t0))
	assert.False(t, claim(t, s, "a", t0.Add(59*time.Minute)))
	assert.True(t, claim(t, s, "a", t0.Add(time.Hour)), "forgotten after the window")
	assert.False(t, claim(t, s, "a", t0.Add(90*time.Minute)), "claimed again at 1h: remembered from then")

	require.NoError(t, s.Release(context.Background(), "a"))
	assert.True(t, claim(t, s, "a", t0.Add(91*time.Minute)), "released: a retry runs")
}

// TestMemorySeenBound: past max keys the oldest are forgotten, and memory
// stays bounded whatever the mix of claims and releases.
func TestMemorySeenBound(t *testing.T) {
	s := NewMemorySeen(24*time.Hour, 10)
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range 25 {
		assert.True(t, claim(t, s, strconv.Itoa(i), t0.Add(time.Duration(i)*time.Second)))
	}
	assert.Equal(t, 10, s.Len())
	assert.True(t, claim(t, s, "0", t0.Add(time.Minute)), "the oldest went first")
	assert.False(t, claim(t, s, "24", t0.Add(time.Minute)), "the newest stays")

	for i := range 1000 { // claims whose runs all failed
		k := "r" + strconv.Itoa(i)
		assert.True(t, claim(t, s, k, t0.Add(time.Hour)))
		require.NoError(t, s.Release(context.Background(), k))
	}
	assert.LessOrEqual(t, len(s.order), 20)
	assert.LessOrEqual(t, s.Len(), 10)
}

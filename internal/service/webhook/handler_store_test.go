package webhook

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fullStore is a Seen whose writes are refused while full is set, as the
// daemon's state database refuses them on a full disk.
type fullStore struct {
	full atomic.Bool
	*MemorySeen
}

func (s *fullStore) Claim(ctx context.Context, key string, now time.Time) (bool, error) {
	if s.full.Load() {
		return false, fmt.Errorf("record the delivery: %w: the disk is full", ErrUnavailable)
	}
	return s.MemorySeen.Claim(ctx, key, now)
}

// TestSeenUnavailable: a Seen store that cannot record a delivery now is
// answered 503 with Retry-After, nothing runs, and the sender's retry
// runs once the store takes writes again.
func TestSeenUnavailable(t *testing.T) {
	store := &fullStore{MemorySeen: NewMemorySeen(time.Hour, 100)}
	store.full.Store(true)
	r := newRig(t, Options{Seen: store})
	d := ciDelivery(t, "full-1")
	code, h, body := r.send(t, d)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "60", h.Get("Retry-After"))
	assert.Contains(t, body, "the disk is full")
	assert.Empty(t, r.chat.taken())

	store.full.Store(false)
	code, _, _ = r.send(t, d)
	assert.Equal(t, http.StatusAccepted, code)
	assert.Len(t, r.chat.taken(), 1)
}

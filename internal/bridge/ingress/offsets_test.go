package ingress

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

type memOffsets struct {
	offset  int64
	handled []int64
}

func (m *memOffsets) SetLastUpdateID(_ context.Context, id int64) error { m.offset = id; return nil }
func (m *memOffsets) MarkUpdateHandled(_ context.Context, id int64) error {
	m.handled = append(m.handled, id)
	return nil
}

func TestOffsetTrackerWatermark(t *testing.T) {
	ctx := context.Background()
	st := &memOffsets{}
	tr := NewOffsets(st, 100, []int64{104})
	assert.False(t, tr.Begin(99), "below the offset")
	assert.False(t, tr.Begin(104), "handled before a restart")
	assert.True(t, tr.Begin(101))
	assert.True(t, tr.Begin(102))
	assert.False(t, tr.Begin(102), "in flight")
	assert.True(t, tr.Begin(105))

	assert.NoError(t, tr.Finish(ctx, 102))
	assert.Equal(t, int64(100), tr.Current(), "101 is still in flight")
	assert.Equal(t, []int64{102}, st.handled)
	assert.NoError(t, tr.Finish(ctx, 101))
	assert.Equal(t, int64(104), tr.Current(), "101, 102 and the restored 104 are contiguous-done below 105")
	assert.Equal(t, int64(104), st.offset)
	assert.NoError(t, tr.Finish(ctx, 105))
	assert.Equal(t, int64(105), st.offset)
	assert.False(t, tr.Begin(102))
}

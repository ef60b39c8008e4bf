package bridge

import (
	"context"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
)

func TestParseCommand(t *testing.T) {
	cmd := func(off, n int) []models.MessageEntity {
		return []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: off, Length: n}}
	}
	tests := []struct {
		name, text string
		ents       []models.MessageEntity
		want       command
		ok         bool
	}{
		{"plain", "/status", cmd(0, 7), command{Name: "status"}, true},
		{"args", "/mode  plan ", cmd(0, 5), command{Name: "mode", Args: "plan"}, true},
		{"bot suffix", "/new@untether_bot", cmd(0, 17), command{Name: "new"}, true},
		{"other bot", "/new@other_bot", cmd(0, 14), command{}, false},
		{"upper", "/HELP", cmd(0, 5), command{Name: "help"}, true},
		{"emoji args", "/model 😀 x", cmd(0, 6), command{Name: "model", Args: "😀 x"}, true},
		{"not at start", "héllo /cancel", cmd(6, 7), command{}, false},
		{"no entity", "/cancel", nil, command{}, false},
		{"length past end", "/x", cmd(0, 9), command{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseCommand(tt.text, tt.ents, "untether_bot")
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

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
	tr := newOffsetTracker(st, 100, []int64{104})
	assert.False(t, tr.begin(99), "below the offset")
	assert.False(t, tr.begin(104), "handled before a restart")
	assert.True(t, tr.begin(101))
	assert.True(t, tr.begin(102))
	assert.False(t, tr.begin(102), "in flight")
	assert.True(t, tr.begin(105))

	assert.NoError(t, tr.finish(ctx, 102))
	assert.Equal(t, int64(100), tr.current(), "101 is still in flight")
	assert.Equal(t, []int64{102}, st.handled)
	assert.NoError(t, tr.finish(ctx, 101))
	assert.Equal(t, int64(104), tr.current(), "101, 102 and the restored 104 are contiguous-done below 105")
	assert.Equal(t, int64(104), st.offset)
	assert.NoError(t, tr.finish(ctx, 105))
	assert.Equal(t, int64(105), st.offset)
	assert.False(t, tr.begin(102))
}

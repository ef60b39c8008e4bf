package budget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
)

func TestUsagePeriod(t *testing.T) {
	self, other, topic := state.ChatKey{Chat: 1}, state.ChatKey{Chat: 2}, state.ChatKey{Chat: -100, Thread: 7}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	turns := []state.TurnRecord{
		{Key: other, StartedAt: t0.Add(-48 * time.Hour), CostUSD: 5},
		{Key: self, StartedAt: t0, CostUSD: 0.5, InputTokens: 100, OutputTokens: 10},
		{Key: topic, StartedAt: t0.Add(time.Minute), CostUSD: 0.5, InputTokens: 200, OutputTokens: 20},
		{Key: other, StartedAt: t0.Add(2 * time.Minute), CostUSD: 1, InputTokens: 300, OutputTokens: 30},
	}
	p := usagePeriod("Today", turns, t0, self)
	assert.Equal(t, render.UsageTotals{CostUSD: 2, Turns: 3, InputTokens: 600, OutputTokens: 60}, p.Total)
	labels := []string{}
	for _, c := range p.Chats {
		labels = append(labels, c.Label)
	}
	assert.Equal(t, []string{"chat 2", "this chat", "chat -100 · topic 7"}, labels, "by cost, this chat first among equals")
	assert.Equal(t, "this topic", chatKeyLabel(topic, topic))
}

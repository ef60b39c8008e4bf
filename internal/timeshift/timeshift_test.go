package timeshift

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAdvanceFiresTimersItPasses(t *testing.T) {
	start := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	c := New(start)
	assert.WithinDuration(t, start, c.Now(), time.Second)
	soon, later := c.After(30*time.Minute), c.After(2*time.Hour)
	c.Advance(time.Hour)
	select {
	case at := <-soon:
		assert.False(t, at.Before(start.Add(time.Hour)))
	case <-time.After(time.Second):
		t.Fatal("a timer the jump passed did not fire")
	}
	select {
	case <-later:
		t.Fatal("a timer beyond the jump fired")
	default:
	}
	assert.Equal(t, 1, c.day(), "the clock crossed midnight")
}

func TestRealTimeFiresToo(t *testing.T) {
	c := New(time.Now().Add(48 * time.Hour))
	select {
	case <-c.After(20 * time.Millisecond):
	case <-time.After(5 * time.Second):
		t.Fatal("a timer did not fire in real time")
	}
	assert.Panics(t, func() { c.Advance(-time.Second) })
}

func (c *Clock) day() int { return c.Now().UTC().Day() }

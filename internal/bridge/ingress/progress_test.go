package ingress

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPollProgress(t *testing.T) {
	const stale = 30 * time.Second
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	panicked := errors.New("route update: panic: boom")

	t.Run("nothing to judge before the first poll", func(t *testing.T) {
		var p pollProgress
		assert.ErrorContains(t, p.check(at(0), stale), "no getUpdates poll has completed yet")
		assert.Empty(t, p.trouble(at(0), stale))
	})
	t.Run("idle long polls are progress", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 0, 0)
		assert.NoError(t, p.check(at(29), stale))
		p.polled(at(25), 0, 0)
		assert.NoError(t, p.check(at(50), stale))
		assert.ErrorContains(t, p.check(at(60), stale), "no getUpdates poll finished since")
	})
	t.Run("a poll counts once its updates are handled", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 0, 0)
		p.polled(at(1), 3, 12)
		p.handledUpdate(at(2), 10, false, nil)
		p.handledUpdate(at(3), 11, false, nil)
		assert.ErrorContains(t, p.check(at(32), stale), "updates up to 12 were received, only those up to 11 were handled")
		p.handledUpdate(at(33), 12, false, nil)
		assert.NoError(t, p.check(at(34), stale))
	})
	t.Run("idle polls do not count while a received update waits for the worker", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 1, 5)
		for s := 1; s < 100; s += 2 {
			p.polled(at(s), 0, 0) // the poller keeps polling; the worker is stuck
		}
		assert.ErrorContains(t, p.check(at(100), stale), "no progress since 2026-01-02T03:04:05Z: updates up to 5 were received, only those up to 0 were handled")
		p.handledUpdate(at(101), 5, false, nil)
		assert.NoError(t, p.check(at(102), stale))
	})
	t.Run("a Telegram outage is no wedge while nothing is pending", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 0, 0)
		for s := 5; s <= 100; s += 5 {
			p.attemptFailed(at(s))
		}
		assert.NoError(t, p.check(at(101), stale))
		assert.Empty(t, p.trouble(at(101), stale))
	})
	t.Run("unreadable responses stop progress and are reported", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 0, 0)
		bad := errors.New("undecodable getUpdates response: result is not a list")
		for s := 1; s <= 40; s += 5 {
			assert.Equal(t, (s-1)/5+1, p.unreadable(at(s), bad))
			p.attemptFailed(at(s + 1)) // an outage in between does not count either
		}
		assert.Contains(t, p.trouble(at(41), stale), "Telegram updates unreadable: 8 getUpdates responses in a row since 2026-01-02T03:04:06Z")
		err := p.check(at(41), stale)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "8 getUpdates responses in a row could not be read")
		assert.Contains(t, err.Error(), "result is not a list")
		p.polled(at(42), 0, 0)
		assert.NoError(t, p.check(at(43), stale))
		assert.Empty(t, p.trouble(at(43), stale))
	})
	t.Run("one routing panic is survived, a run of them is not", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 1, 1)
		p.handledUpdate(at(1), 1, false, panicked)
		p.polled(at(20), 0, 0)
		assert.NoError(t, p.check(at(45), stale), "a single bad update does not wedge the loop")
		assert.Empty(t, p.trouble(at(45), stale))
		p.handledUpdate(at(45), 2, false, nil) // and a good one ends the run

		p.polled(at(46), 3, 5)
		for id := int64(3); id <= 5; id++ {
			p.handledUpdate(at(47), id, false, panicked)
		}
		p.polled(at(48), 0, 0)
		assert.Equal(t, "Telegram updates failing to route: 3 in a row", p.trouble(at(49), stale))
		err := p.check(at(80), stale)
		assert.ErrorContains(t, err, "the last 3 updates failed to route: route update: panic: boom")
		var pub interface{ Public() string } // what /healthz shows (health.Private)
		require.ErrorAs(t, err, &pub)
		assert.NotContains(t, pub.Public(), "boom", "a cause may quote an update: /healthz leaves it out")
		assert.Contains(t, pub.Public(), "the last 3 updates failed to route")
		assert.ErrorIs(t, err, panicked, "the cause stays reachable")
		p.polled(at(81), 1, 6)
		p.handledUpdate(at(82), 6, false, nil)
		assert.NoError(t, p.check(at(83), stale))
	})
	t.Run("a skipped update is progress, and counted", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 2, 8)
		p.handledUpdate(at(1), 7, true, nil)
		p.handledUpdate(at(2), 8, false, nil)
		assert.NoError(t, p.check(at(3), stale))
		assert.Equal(t, 1, p.skippedCount())
	})
	t.Run("a stalled loop shows in STATUS= once stale", func(t *testing.T) {
		var p pollProgress
		p.polled(at(0), 1, 9)
		assert.Empty(t, p.trouble(at(10), stale))
		assert.Contains(t, p.trouble(at(40), stale), "update loop stalled")
	})
}

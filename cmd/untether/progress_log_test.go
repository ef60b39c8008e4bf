package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

// TestProgressLogNamesWhatHealthzHides: Healthy's own text, which names a
// wedged chat where /healthz does not, reaches the log with or without a
// systemd watchdog; without one (nothing restarts the daemon) when the
// trouble starts and then every progressLogEvery, not at every tick, though
// the text changes (its counts do).
func TestProgressLogNamesWhatHealthzHides(t *testing.T) {
	wedged := func(n int) error {
		return fmt.Errorf("chat 1001 has not handled its mailbox since 2026-01-02T03:04:05Z; %d updates", n)
	}
	t0 := time.Date(2026, 1, 2, 3, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		watched bool
		lines   int
	}{{"without a watchdog", false, 3}, {"under a watchdog", true, 4}} {
		var buf bytes.Buffer
		log := zerolog.New(&buf)
		p := progressLog{log: &log}
		assert.False(t, p.healthy(wedged(1), tc.watched, t0), tc.name)
		assert.False(t, p.healthy(wedged(2), tc.watched, t0.Add(10*time.Second)), tc.name)   // counts moved: not again
		assert.False(t, p.healthy(wedged(3), tc.watched, t0.Add(progressLogEvery)), tc.name) // still wedged: again
		assert.True(t, p.healthy(nil, tc.watched, t0.Add(progressLogEvery+time.Minute)), tc.name)
		assert.False(t, p.healthy(wedged(4), tc.watched, t0.Add(progressLogEvery+2*time.Minute)), tc.name) // wedged again: new trouble
		var errs, again int
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if strings.Contains(l, "making progress again") {
				again++
				continue
			}
			errs++
			assert.Contains(t, l, `"level":"error"`, tc.name)
			assert.Contains(t, l, "chat 1001 has not handled its mailbox", tc.name)
		}
		assert.Equal(t, tc.lines, errs, "%s: %s", tc.name, buf.String())
		if tc.watched {
			assert.Zero(t, again, "systemd restarts it: nothing to say")
		} else {
			assert.Equal(t, 1, again, "the end of the trouble is said once")
		}
	}
}

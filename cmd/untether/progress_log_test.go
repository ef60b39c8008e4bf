package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

// TestProgressLogNamesWhatHealthzHides: Healthy's own text, which names a
// wedged chat where /healthz does not, reaches the log with or without a
// systemd watchdog; without one (nothing restarts the daemon) once per
// finding, not at every tick.
func TestProgressLogNamesWhatHealthzHides(t *testing.T) {
	wedged := errors.New("chat 1001 has not handled its mailbox since 2026-01-02T03:04:05Z")
	for _, tc := range []struct {
		name    string
		watched bool
		lines   int
	}{{"without a watchdog", false, 2}, {"under a watchdog", true, 3}} {
		var buf bytes.Buffer
		log := zerolog.New(&buf)
		p := progressLog{log: &log}
		assert.False(t, p.healthy(wedged, tc.watched), tc.name)
		assert.False(t, p.healthy(wedged, tc.watched), tc.name)
		assert.True(t, p.healthy(nil, tc.watched), tc.name)
		assert.False(t, p.healthy(wedged, tc.watched), tc.name) // wedged again: a new finding
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		assert.Len(t, lines, tc.lines, "%s: %s", tc.name, buf.String())
		for _, l := range lines {
			assert.Contains(t, l, `"level":"error"`, tc.name)
			assert.Contains(t, l, "chat 1001 has not handled its mailbox", tc.name)
		}
	}
}

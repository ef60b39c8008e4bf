package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// TestSIGTERMDoesNotWaitOnAnApproval: SIGTERM while a turn waits for an
// approval stops that turn at once instead of holding the stop for the
// whole drain_timeout: the daemon exits 0 within seconds, no CLI is left,
// and the approval offers ▶️ Continue for after the restart.
func TestSIGTERMDoesNotWaitOnAnApproval(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	claude := d.withClaude()
	d.cfg.DrainTimeout = "2m"
	p := d.start()
	d.waitReady(p)

	chat := telegramtest.ChatID(alice)
	d.say(alice, "BASHRUN please")
	ap := d.waitBot(chat, "approval", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo hi > out.txt") && buttonData(m, "Approve") != ""
	})
	during := cliProcesses(t, claude)
	start := time.Now()
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second, "the stop does not wait for a decision nobody makes")
	t.Logf("SIGTERM with an approval pending: exited after %v (drain_timeout 2m)", took.Round(time.Millisecond))

	m, ok := d.tg.Snapshot().Message(chat, ap.ID)
	require.True(t, ok)
	assert.NotEmpty(t, buttonData(m, "Continue"), "the approval offers Continue: %q", m.Text)
	assert.NoFileExists(t, claude.Workdir+"/out.txt")
	requireNothingLeft(t, claude, during)
}

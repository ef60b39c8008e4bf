package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

const conflictDesc = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"

// TestBriefConflictIsRidden: a few 409s (the old instance of a restart
// still polling) are retried, not fatal.
func TestBriefConflictIsRidden(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	<-r.ready
	r.tg.FailNext("getUpdates", 3, 409, conflictDesc, 0)
	in := r.say(chat, alice, "after the conflict")
	r.finalAnswer(chat, in.ID, "echo: after the conflict")
	select {
	case err := <-r.done:
		t.Fatalf("the bridge stopped: %v", err)
	default:
	}
	assert.Equal(t, 1, strings.Count(r.logs.String(), "another program is polling this bot token (409 Conflict)"), "warned once")
}

// TestLastingConflictStops: 409s that go on for longer than
// conflict_grace stop the bridge with ErrFatalTelegram (exit 12).
func TestLastingConflictStops(t *testing.T) {
	r := newRig(t, withConfig(func(c *config.Config) { c.Telegram.ConflictGrace = config.Duration(time.Second) }))
	<-r.ready
	start := time.Now()
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "getUpdates" },
		telegramtest.Fault{Code: 409, Description: conflictDesc})
	defer stop()
	var err error
	select {
	case err = <-r.done:
	case <-time.After(wait):
		t.Fatal("the bridge did not give up")
	}
	r.done <- nil // consumed here; the rig's stop expects a result
	require.ErrorIs(t, err, bridge.ErrFatalTelegram)
	assert.Contains(t, err.Error(), "another poller")
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "not before conflict_grace")
	assert.Contains(t, r.logs.String(), "for longer than telegram.conflict_grace")
}

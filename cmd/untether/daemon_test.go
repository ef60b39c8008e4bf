package main

import (
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// TestNotifySequence checks what systemd hears over NOTIFY_SOCKET: READY=1
// only after a getUpdates succeeded, STATUS= with the live counts,
// WATCHDOG=1 only once ready, and on SIGTERM STOPPING=1 with enough
// EXTEND_TIMEOUT_USEC for the drain; then a clean exit.
func TestNotifySequence(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.cfg.DrainTimeout = "45s"
	sock := d.withNotify()
	// The first two polls fail: READY=1 must wait for one that succeeds,
	// not come after getMe or a failed poll.
	d.tg.FailNext("getUpdates", 2, http.StatusInternalServerError, "Internal Server Error", 0)
	p := d.start()

	ready := sock.waitFor("READY=1", func(m string) bool { return m == "READY=1" })
	polls := d.tg.Snapshot().CallsOf("getUpdates")
	failed := 0
	for _, c := range polls {
		if c.Status == http.StatusInternalServerError {
			failed++
		}
	}
	assert.Equal(t, 2, failed, "both failing polls were answered before READY=1")
	// READY=1 reports the third poll's response, so that poll arrived; the
	// fake may record its status a moment after the daemon read it.
	assert.GreaterOrEqual(t, len(polls), 3, "READY=1 came only after a getUpdates succeeded")

	sock.waitFor("STATUS=", func(m string) bool { return m == "STATUS=0 chats, 0 running turns, 0 pending approvals" })
	pet := sock.waitFor("WATCHDOG=1", func(m string) bool { return m == "WATCHDOG=1" })
	assert.Greater(t, pet, ready, "the watchdog is fed only once the daemon serves")

	p.signal(syscall.SIGTERM)
	stopping := sock.waitFor("STOPPING=1", func(m string) bool { return strings.HasPrefix(m, "STOPPING=1") })
	require.Equal(t, exitOK, p.waitExit())

	msgs := sock.messages()
	lines := strings.Split(msgs[stopping], "\n")
	require.Len(t, lines, 2, "STOPPING=1 and EXTEND_TIMEOUT_USEC= travel together: %q", msgs[stopping])
	usec, ok := strings.CutPrefix(lines[1], "EXTEND_TIMEOUT_USEC=")
	require.True(t, ok, "%q", msgs[stopping])
	extend, err := strconv.ParseInt(usec, 10, 64)
	require.NoError(t, err)
	assert.Greater(t, time.Duration(extend)*time.Microsecond, 45*time.Second,
		"systemd is asked to wait longer than the configured drain_timeout")
	status := sock.waitFor("STATUS= saying it stops", func(m string) bool { return strings.HasPrefix(m, "STATUS=stopping: ") })
	assert.Greater(t, status, stopping)
	for _, m := range msgs[stopping+1:] {
		assert.NotEqual(t, "READY=1", m)
		assert.NotEqual(t, "WATCHDOG=1", m, "no watchdog petting once stopping")
	}
	for _, m := range msgs[:ready] {
		assert.NotEqual(t, "WATCHDOG=1", m)
	}
	assert.Equal(t, 1, countOf(msgs, "READY=1"))
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestSecondInstanceIsRefused runs two daemons on one state dir: the
// second exits with the state exit code and names the holder, before it
// talks to Telegram; the first keeps serving.
func TestSecondInstanceIsRefused(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	first := d.start()
	d.waitReady(first)

	second := startProcess(t, baseEnv(d.home), "run", "--config", d.cfgPath)
	require.Equal(t, exitState, second.waitExit(), "stderr:\n%s", second.stderr.String())
	line := second.waitLog("why it cannot start", func(l logLine) bool { return l.str("level") == "error" })
	assert.Contains(t, line.str("message"), "another untether")
	assert.Contains(t, line.str("error"), "pid "+strconv.Itoa(first.pid()), "the message names the running instance")
	assert.Len(t, d.tg.Snapshot().CallsOf("getMe"), 1, "the second instance never reached Telegram")

	// The first instance is unaffected: it still answers the poll cycle
	// and stops cleanly.
	polls := len(d.tg.Snapshot().CallsOf("getUpdates"))
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("getUpdates")) > polls })
	first.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, first.waitExit())
}

// TestFatalTelegramErrors: another poller on the token (409 Conflict) or a
// refused token is fatal, loud, and has its own exit code, so systemd's
// RestartPreventExitStatus stops a restart loop against Telegram.
func TestFatalTelegramErrors(t *testing.T) {
	t.Parallel()
	t.Run("second poller", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		d.cfg.TelegramExtra = "conflict_grace = \"2s\"\n"
		p := d.start()
		d.waitReady(p)
		// Poll with the same token until the daemon gives up (after
		// conflict_grace of conflicts). Each of our
		// polls ends the daemon's pending long poll with 409, as Telegram
		// does.
		url := d.tg.URL() + "/bot" + d.tg.Token() + "/getUpdates?timeout=0"
		for !p.exited() {
			resp, err := http.Get(url) //nolint:noctx // loopback, bounded by the loop
			if err == nil {
				resp.Body.Close()
			}
			select {
			case <-p.done:
			case <-time.After(100 * time.Millisecond):
			}
		}
		require.Equal(t, exitFatalTG, p.waitExit())
		line := p.waitLog("the 409", func(l logLine) bool {
			return l.str("level") == "error" && strings.Contains(l.str("message"), "409 Conflict")
		})
		assert.Contains(t, line.str("error"), "terminated by other getUpdates request")
		p.waitLog("the fatal stop", func(l logLine) bool {
			return l.str("level") == "error" && strings.Contains(l.str("error"), "another poller")
		})
	})
	t.Run("refused token", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		d.cfg.Token = "42:this-token-was-revoked"
		p := d.start()
		require.Equal(t, exitFatalTG, p.waitExit())
		p.waitLog("the refused token", func(l logLine) bool {
			return l.str("level") == "error" && strings.Contains(l.str("error"), "token was refused")
		})
		assert.NotContains(t, p.stderr.String(), "this-token-was-revoked")
	})
	t.Run("token revoked while running", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		p := d.start()
		d.waitReady(p)
		d.tg.FailNext("getUpdates", 1, http.StatusUnauthorized, "Unauthorized", 0)
		require.Equal(t, exitFatalTG, p.waitExit())
		p.waitLog("the revoked token", func(l logLine) bool {
			return l.str("level") == "error" && strings.Contains(l.str("error"), "revoked")
		})
	})
}

// TestConfigErrorExitCode: a broken config exits 10 before anything else.
func TestConfigErrorExitCode(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.cfg.Users = nil
	p := d.start()
	require.Equal(t, exitConfig, p.waitExit())
	assert.Contains(t, p.stderr.String(), "telegram.allowed_user_ids")
	assert.Empty(t, d.tg.Snapshot().Calls, "nothing reached Telegram")
}

// TestStopDuringStartup: SIGTERM while the daemon still connects is a clean
// stop, not a failure systemd would restart.
func TestStopDuringStartup(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.tg.Delay("getMe", time.Hour) // ends when the client goes away
	p := d.start()
	d.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("getMe")) > 0 })
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit(), "stderr:\n%s", p.stderr.String())
	assert.Empty(t, d.tg.Snapshot().CallsOf("getUpdates"))
}

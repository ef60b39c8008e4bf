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

// TestStatusReportsUnreadableUpdates: while getUpdates answers with nothing
// an update can be read from, STATUS= says so ahead of the counts and the
// log names the error (issue 16); once Telegram recovers, STATUS= is back to
// the counts alone.
func TestStatusReportsUnreadableUpdates(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	sock := d.withNotify()
	p := d.start()
	sock.waitFor("READY=1", func(m string) bool { return m == "READY=1" })
	const counts = "0 chats, 0 running turns, 0 pending approvals"

	stop := d.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "getUpdates" },
		telegramtest.Fault{Code: 200, Body: "<html>a proxy's idea of a greeting</html>"})
	// The long poll in flight ends normally; the ones after it read this.
	i := sock.waitFor("STATUS= naming the unreadable updates", func(m string) bool {
		return strings.HasPrefix(m, "STATUS=Telegram updates unreadable: ")
	})
	assert.True(t, strings.HasSuffix(sock.messages()[i], "; "+counts), "%q", sock.messages()[i])
	line := p.waitLog("the unreadable poll", msgIs("getUpdates returned nothing untether can read; retrying"))
	assert.Equal(t, "error", line.str("level"))
	assert.Contains(t, line.str("error"), "undecodable getUpdates response")
	assert.NotContains(t, line.str("error"), d.tg.Token())

	stop()
	n := len(sock.messages())
	require.Eventually(t, func() bool {
		for _, m := range sock.messages()[n:] {
			if m == "STATUS="+counts {
				return true
			}
		}
		return false
	}, wait, 50*time.Millisecond, "STATUS= recovers with the polls")
	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
}

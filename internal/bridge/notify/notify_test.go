package notify

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSystemd listens on a NOTIFY_SOCKET the way systemd does.
func fakeSystemd(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return conn
}

func read(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := conn.Read(buf)
	require.NoError(t, err)
	return string(buf[:n])
}

func TestNotifySequence(t *testing.T) {
	conn := fakeSystemd(t)
	n := New()
	require.NoError(t, n.Ready())
	require.NoError(t, n.Status("3 chats, 1 running, 0 approvals"))
	require.NoError(t, n.Watchdog())
	require.NoError(t, n.Stopping(2*time.Minute))
	assert.Equal(t, "READY=1", read(t, conn))
	assert.Equal(t, "STATUS=3 chats, 1 running, 0 approvals", read(t, conn))
	assert.Equal(t, "WATCHDOG=1", read(t, conn))
	stop := read(t, conn)
	assert.True(t, strings.HasPrefix(stop, "STOPPING=1\n"), stop)
	assert.Contains(t, stop, "EXTEND_TIMEOUT_USEC=120000000")
}

func TestWatchdogInterval(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	assert.Zero(t, WatchdogInterval())
	t.Setenv("WATCHDOG_USEC", "30000000")
	t.Setenv("WATCHDOG_PID", "")
	assert.Equal(t, 15*time.Second, WatchdogInterval())
}

func TestNoSocketIsNoOp(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	assert.NoError(t, New().Ready())
}

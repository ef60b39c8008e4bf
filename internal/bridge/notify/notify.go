package notify

import (
	"fmt"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends sd_notify messages.
type Notifier struct {
	// unsetEnv is false: children (the CLI never sees the daemon's env
	// anyway) and later calls keep NOTIFY_SOCKET.
}

// New returns a notifier.
func New() *Notifier { return &Notifier{} }

func (n *Notifier) send(state string) error {
	if _, err := daemon.SdNotify(false, state); err != nil {
		return fmt.Errorf("sd_notify %q: %w", state, err)
	}
	return nil
}

// Ready says the daemon is serving.
func (n *Notifier) Ready() error { return n.send(daemon.SdNotifyReady) }

// Status sets the one-line status systemctl shows.
func (n *Notifier) Status(s string) error { return n.send("STATUS=" + s) }

// Watchdog pets the watchdog.
func (n *Notifier) Watchdog() error { return n.send(daemon.SdNotifyWatchdog) }

// Stopping says a drain began and asks for d more time before systemd's
// stop timeout kills the service.
func (n *Notifier) Stopping(d time.Duration) error {
	return n.send(fmt.Sprintf("%s\nEXTEND_TIMEOUT_USEC=%d", daemon.SdNotifyStopping, d.Microseconds()))
}

// WatchdogInterval returns how often to pet the watchdog (half of
// WatchdogSec), or 0 when systemd does not watch this process.
func WatchdogInterval() time.Duration {
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil || d <= 0 {
		return 0
	}
	return d / 2
}

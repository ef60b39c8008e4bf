package loadtest

import (
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
)

// dispatchLog records, through the outbox's benchmark hook, when each
// answer was queued in the outbox and when the outbox sent it, so an
// answer's latency splits into the bridge's part (result → queued) and the
// outbox's (queued → sent); the rest is the HTTP call to the fake.
type dispatchLog struct {
	mu    sync.Mutex
	first map[string]outbox.Dispatch // answer tag → its first chunk's first dispatch
}

func newDispatchLog() *dispatchLog { return &dispatchLog{first: map[string]outbox.Dispatch{}} }

func (l *dispatchLog) record(d outbox.Dispatch) {
	if d.Kind != "send" {
		return
	}
	_, tag, ok := ResultAt(d.Text)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.first[tag]; !seen {
		l.first[tag] = d
	}
}

// split returns, for the answer tagged tag whose result was written at
// at, the time until the outbox had it, the time the outbox held it, and
// when it was sent.
func (l *dispatchLog) split(tag string, at time.Time) (bridge, held time.Duration, sent time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.first[tag]
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return d.Queued.Sub(at), d.Sent.Sub(d.Queued), d.Sent, true
}

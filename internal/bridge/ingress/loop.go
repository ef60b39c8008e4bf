package ingress

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/outbox"
)

// maxUpdatesBody bounds a getUpdates response. Telegram returns at most 100
// updates; this leaves room for large ones and stops a hostile or broken
// server from exhausting memory.
const maxUpdatesBody = 32 << 20

// Calls is the part of the outbox the update loop tells about Telegram's
// reachability: a getUpdates answered proves Telegram is back.
type Calls interface {
	CallStarted() outbox.CallMark
	Reachable(outbox.CallMark)
}

// Loop is the update loop's guard and liveness. Its Transport wraps
// Telegram's HTTP transport: every successful getUpdates response goes
// through the update guard before go-telegram/bot decodes it, and what each
// poll achieved is counted; the first decoded poll calls Ready. Other
// methods pass through untouched.
//
// Why a transport shim rather than our own getUpdates loop: the library's
// loop, its error classification (ErrorConflict, ErrorUnauthorized) and its
// offset handling stay as they are; the shim only ensures the one step that
// fails, decoding, cannot fail on the content of an update.
type Loop struct {
	log      zerolog.Logger
	ready    func()
	readyOne atomic.Bool
	calls    atomic.Pointer[Calls]
	observe  atomic.Pointer[CallObserver] // hears every Bot API call (calls.go)
	polled   atomic.Int64                 // when a getUpdates call last succeeded, Unix ns (calls.go)
	progress pollProgress                 // is the update loop making progress
	notes    updateNotes                  // what the guard learned, per update id
}

// NewLoop returns a loop that logs to log and calls ready (if set) once,
// after the first decoded poll.
func NewLoop(log zerolog.Logger, ready func()) *Loop {
	return &Loop{log: log, ready: ready}
}

// SetCalls tells the loop about the outbox once it exists.
func (l *Loop) SetCalls(c Calls) { l.calls.Store(&c) }

// Transport wraps next with the guard.
func (l *Loop) Transport(next http.RoundTripper) http.RoundTripper {
	return guardTransport{next: next, l: l}
}

type guardTransport struct {
	next http.RoundTripper
	l    *Loop
}

func (g guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	poll := strings.HasSuffix(req.URL.Path, "/getUpdates")
	var (
		calls Calls
		sent  outbox.CallMark // a long poll sent before an outage proves nothing about it
	)
	if c := g.l.calls.Load(); c != nil && poll {
		calls = *c
		sent = calls.CallStarted()
	}
	resp, err := g.next.RoundTrip(req)
	g.l.observeCall(req, resp, err) // calls.go
	if !poll {
		return resp, err
	}
	p := &g.l.progress
	if err != nil || resp.StatusCode != http.StatusOK {
		p.attemptFailed(time.Now()) // Telegram's side; the library reports and retries
		return resp, err
	}
	if calls != nil {
		calls.Reachable(sent) // Telegram answers: queued answers stop backing off
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody+1))
	_ = resp.Body.Close()
	if err != nil {
		p.attemptFailed(time.Now())
		return nil, fmt.Errorf("read getUpdates response: %w", err)
	}
	var batch guardedBatch
	if len(body) > maxUpdatesBody {
		err = fmt.Errorf("%w: larger than %d bytes", ErrUndecodableBatch, maxUpdatesBody)
	} else {
		batch, err = guardUpdates(body)
	}
	if len(batch.unreadable) > 0 {
		g.l.log.Error().Int("count", len(batch.unreadable)).Strs("excerpts", batch.unreadable).
			Msg("dropping getUpdates entries without a readable update_id")
	}
	if err != nil {
		// The library logs the error through its errors handler and
		// retries after a back-off; progress is not counted, so a server
		// that keeps sending this ends up in STATUS= and stops the watchdog.
		p.unreadable(time.Now(), err)
		return nil, err
	}
	if batch.passed {
		p.attemptFailed(time.Now())
	} else {
		now := time.Now()
		g.l.polled.Store(now.UnixNano())
		for id, n := range batch.notes {
			n.received = now
			batch.notes[id] = n
		}
		g.l.notes.add(batch.notes)
		p.polled(now, batch.count, batch.maxID)
		if g.l.ready != nil && g.l.readyOne.CompareAndSwap(false, true) {
			g.l.ready()
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(batch.body))
	resp.ContentLength = int64(len(batch.body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// Take returns (and forgets) what the guard learned about update id.
func (l *Loop) Take(id int64) Note { return l.notes.take(id) }

// Handled counts update id as handled (routed, declined or skipped; err
// reports a routing panic), for liveness.
func (l *Loop) Handled(now time.Time, id int64, note Note, err error) {
	l.progress.handledUpdate(now, id, note.skipErr != nil, err)
}

// Check reports an update loop that made no progress for stale (see
// pollProgress), nil while it works.
func (l *Loop) Check(now time.Time, stale time.Duration) error { return l.progress.check(now, stale) }

// Trouble describes a problem of the update loop for STATUS=, "" while
// polling works.
func (l *Loop) Trouble(now time.Time, stale time.Duration) string {
	return l.progress.trouble(now, stale)
}

// KeptNote is the note of a message the bridge kept (Note.Raw) and
// replays itself after a restart.
func KeptNote(raw []byte) Note { return Note{kind: "message", raw: raw} }

// Raw is a message's update as the library decoded it (nil for other
// kinds): keep this, not a re-encoding of the library's model.
func (n Note) Raw() []byte { return n.raw }

// LogUnrouted gives an update that carries nothing the bridge routes its
// one log line.
func (n Note) LogUnrouted(log zerolog.Logger, u *models.Update) {
	kind := n.kind
	if kind == "" {
		kind = "unknown"
	}
	switch {
	case n.skipErr != nil:
		log.Error().Int64("update_id", u.ID).Str("kind", kind).Str("error", n.skipErr.Error()).
			Msg("skipping an update untether cannot read")
	case n.repairs != nil:
		log.Error().Int64("update_id", u.ID).Str("kind", kind).Interface("repairs", n.repairs).
			Msg("skipping an update whose content could not be read")
	default:
		log.Info().Int64("update_id", u.ID).Str("kind", kind).Msg("skipping an update of a kind untether does not handle")
	}
}

// LogRepaired reports an update that is routed without the parts the
// client library could not decode. From a stranger (fromAllowed false) it
// is only a debug line: strangers must not be able to fill the log.
func (n Note) LogRepaired(log zerolog.Logger, u *models.Update, fromAllowed bool) {
	if n.repairs == nil {
		return
	}
	ev := log.Debug()
	if fromAllowed {
		ev = log.Warn()
	}
	ev.Int64("update_id", u.ID).Str("kind", n.kind).Interface("repairs", n.repairs).
		Msg("handling an update without the parts the Telegram client library could not decode")
}

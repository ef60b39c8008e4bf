package ingress

import (
	"fmt"
	"sync"
	"time"
)

// routeFailLimit is how many updates in a row may fail to route (a
// recovered panic) before the loop no longer counts as making progress.
const routeFailLimit = 3

// pollProgress judges whether the update loop makes progress, for Healthy
// (and so the systemd watchdog) and STATUS=. A poll counts only once every
// update it returned has been routed or deliberately skipped: a response
// the library cannot use, or a worker that stops handling what it
// received, is no progress however often getUpdates returns. A poll that
// failed on Telegram's side (network error, HTTP error, API error) still
// counts while nothing is pending: the loop is alive and retrying, and a
// Telegram outage must not look like a wedged daemon.
type pollProgress struct {
	mu    sync.Mutex
	first time.Time // when the first poll finished, however it went
	last  time.Time // when the loop last made progress

	received int64 // highest update id a decoded poll handed to the library
	handled  int64 // highest update id the handler has finished

	undecodable int // getUpdates responses in a row nothing could be read from
	decodeErr   error
	decodeSince time.Time

	routeFails int // updates in a row whose routing failed
	routeErr   error

	skipped int // updates skipped as unreadable since start
}

// polled records a decoded poll that handed count updates, up to maxID, to
// the library.
func (p *pollProgress) polled(now time.Time, count int, maxID int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.undecodable, p.decodeErr = 0, nil
	if count > 0 && maxID > p.received {
		p.received = maxID
	}
	p.advanceLocked(now)
}

// attemptFailed records a poll that failed on Telegram's side.
func (p *pollProgress) attemptFailed(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
}

// unreadable records a successful getUpdates response from which no update
// could be confirmed; it returns how many came in a row.
func (p *pollProgress) unreadable(now time.Time, err error) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.IsZero() {
		p.first = now
	}
	if p.undecodable == 0 {
		p.decodeSince = now
	}
	p.undecodable++
	p.decodeErr = err
	return p.undecodable
}

// handledUpdate records that the handler finished update id; err is a
// routing failure, skipped an update dropped as unreadable.
func (p *pollProgress) handledUpdate(now time.Time, id int64, skipped bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled = max(p.handled, id)
	if skipped {
		p.skipped++
	}
	if err != nil {
		p.routeFails++
		p.routeErr = err
	} else {
		p.routeFails, p.routeErr = 0, nil
	}
	p.advanceLocked(now)
}

func (p *pollProgress) advanceLocked(now time.Time) {
	if p.first.IsZero() {
		p.first = now
	}
	if p.handled >= p.received && p.undecodable == 0 && p.routeFails < routeFailLimit {
		p.last = now
	}
}

// check reports why the loop has made no progress for longer than stale.
func (p *pollProgress) check(now time.Time, stale time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checkLocked(now, stale)
}

func (p *pollProgress) checkLocked(now time.Time, stale time.Duration) error {
	if p.first.IsZero() {
		return fmt.Errorf("no getUpdates poll has completed yet")
	}
	ref := p.last
	if ref.IsZero() {
		ref = p.first // polled, but never made progress
	}
	if now.Sub(ref) <= stale {
		return nil
	}
	since := ref.Format(time.RFC3339)
	switch {
	case p.undecodable > 0:
		return &StalledError{What: fmt.Sprintf("no progress since %s: %d getUpdates responses in a row could not be read", since, p.undecodable), Cause: p.decodeErr}
	case p.routeFails >= routeFailLimit:
		return &StalledError{What: fmt.Sprintf("no progress since %s: the last %d updates failed to route", since, p.routeFails), Cause: p.routeErr}
	case p.handled < p.received:
		return &StalledError{What: fmt.Sprintf("no progress since %s: updates up to %d were received, only those up to %d were handled", since, p.received, p.handled)}
	}
	return &StalledError{What: fmt.Sprintf("no getUpdates poll finished since %s", since)}
}

// StalledError is the update loop's finding when it makes no progress.
// Its cause (why a response could not be read, why an update could not be
// routed) may quote an update: a chat's id, a message's text. So Error,
// for the operator's log and the watchdog, has it, and Public, which
// /healthz shows to whoever reaches the listener, leaves it out.
type StalledError struct {
	What  string
	Cause error // nil when there is none to give
}

func (e *StalledError) Error() string {
	if e.Cause == nil {
		return e.What
	}
	return e.What + ": " + e.Cause.Error()
}

// Public is the finding without its cause.
func (e *StalledError) Public() string { return e.What }

func (e *StalledError) Unwrap() error { return e.Cause }

// trouble describes a problem of the update loop for STATUS=, "" when there
// is none. Before the first poll there is nothing to judge yet.
func (p *pollProgress) trouble(now time.Time, stale time.Duration) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.undecodable > 0:
		return fmt.Sprintf("Telegram updates unreadable: %d getUpdates responses in a row since %s", p.undecodable, p.decodeSince.Format(time.RFC3339))
	case p.routeFails >= routeFailLimit:
		return fmt.Sprintf("Telegram updates failing to route: %d in a row", p.routeFails)
	case p.first.IsZero():
		return ""
	}
	if err := p.checkLocked(now, stale); err != nil {
		return "update loop stalled: " + err.Error()
	}
	return ""
}

// skippedCount is how many updates were skipped as unreadable.
func (p *pollProgress) skippedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.skipped
}

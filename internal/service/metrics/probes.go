package metrics

import (
	"fmt"
	"io"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Probes are read at each scrape: levels the daemon already keeps, which
// would be wrong as soon as an event was missed if they were counted up
// and down instead. A nil field leaves its metric out of the scrape (no
// series rather than a false zero); SetProbes can be called again.
//
// Each function must be cheap and must not block: it runs on the scrape's
// goroutine, under whatever lock it takes.
type Probes struct {
	// LiveCLIs is the number of running Claude CLI processes.
	LiveCLIs func() int
	// WaitingForSlot is the number of chats waiting for a live slot
	// (claude.max_live_processes reached).
	WaitingForSlot func() int
	// PendingApprovals is the number of approvals waiting for a person.
	PendingApprovals func() int
	// OutboxDepth is the number of operations queued in the outbox, by
	// priority: high (answers, approvals) and low (progress edits).
	OutboxDepth func() (high, low int)
	// ChatsInPenalty is the number of chats paused by a 429 right now.
	ChatsInPenalty func() int
	// LastPollSuccess is when a getUpdates call last succeeded; zero
	// before the first.
	LastPollSuccess func() time.Time
}

// SetProbes makes the next scrapes read p.
func (m *Metrics) SetProbes(p Probes) {
	if m == nil {
		return
	}
	m.probes.Store(&p)
}

// The outbox's two series.
var (
	outboxHigh = seriesName(NameOutboxDepth, []string{"priority"}, []string{priorityHigh})
	outboxLow  = seriesName(NameOutboxDepth, []string{"priority"}, []string{priorityLow})
)

// writeProbes writes what the probes read now to w, each family with its
// TYPE line (and the bare HELP line the handler fills in), as the set
// writes its own.
func (m *Metrics) writeProbes(w io.Writer) {
	p := m.probes.Load()
	if p == nil {
		return
	}
	m.gauge(w, NameLiveCLIs, p.LiveCLIs)
	m.gauge(w, NameWaitingForSlot, p.WaitingForSlot)
	m.gauge(w, NamePendingApprovals, p.PendingApprovals)
	m.gauge(w, NameChatsInPenalty, p.ChatsInPenalty)
	if f := p.OutboxDepth; f != nil {
		var high, low int
		if m.probe(NameOutboxDepth, func() { high, low = f() }) {
			vm.WriteMetadataIfNeeded(w, NameOutboxDepth, "gauge")
			fmt.Fprintf(w, "%s %d\n%s %d\n", outboxHigh, high, outboxLow, low)
		}
	}
	if f := p.LastPollSuccess; f != nil {
		var t time.Time
		if m.probe(NameLastPollSuccess, func() { t = f() }) && !t.IsZero() {
			vm.WriteGaugeFloat64(w, NameLastPollSuccess, float64(t.UnixMilli())/1e3)
		}
	}
}

// gauge writes the gauge name with what f reads, if f is set.
func (m *Metrics) gauge(w io.Writer, name string, f func() int) {
	if f == nil {
		return
	}
	var v int
	if m.probe(name, func() { v = f() }) {
		vm.WriteGaugeFloat64(w, name, float64(v))
	}
}

// probe runs one probe and tells whether it returned. A probe that panics
// loses its metric for this scrape, and only that: it runs on the
// scrape's goroutine, where a panic would end the daemon. Nothing is
// written until the probe has returned, so a panic leaves no half family.
func (m *Metrics) probe(name string, f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			m.log.Error().Str("metric", name).Interface("panic", r).Msg("a metrics probe panicked; its metric is left out of this scrape")
		}
	}()
	f()
	return true
}

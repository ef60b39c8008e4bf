package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// probeCollector reports Probes at scrape time.
type probeCollector struct{ m *Metrics }

var (
	descLiveCLIs         = prometheus.NewDesc(NameLiveCLIs, "Claude CLI processes running now.", nil, nil)
	descWaitingForSlot   = prometheus.NewDesc(NameWaitingForSlot, "Chats waiting for a free CLI slot (claude.max_live_processes).", nil, nil)
	descPendingApprovals = prometheus.NewDesc(NamePendingApprovals, "Tool approvals waiting for a person.", nil, nil)
	descOutboxDepth      = prometheus.NewDesc(NameOutboxDepth, "Operations queued for Telegram, by priority (high: answers and approvals; low: progress edits).", []string{"priority"}, nil)
	descChatsInPenalty   = prometheus.NewDesc(NameChatsInPenalty, "Chats paused by a 429 (retry_after) right now.", nil, nil)
	descLastPollSuccess  = prometheus.NewDesc(NameLastPollSuccess, "Unix time of the last successful getUpdates call.", nil, nil)
)

func (probeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLiveCLIs, descWaitingForSlot, descPendingApprovals, descOutboxDepth, descChatsInPenalty, descLastPollSuccess} {
		ch <- d
	}
}

func (c probeCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.m.probes.Load()
	if p == nil {
		return
	}
	gauge := func(d *prometheus.Desc, f func() int) {
		if f != nil {
			c.probe(d, func() { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(f())) })
		}
	}
	gauge(descLiveCLIs, p.LiveCLIs)
	gauge(descWaitingForSlot, p.WaitingForSlot)
	gauge(descPendingApprovals, p.PendingApprovals)
	gauge(descChatsInPenalty, p.ChatsInPenalty)
	if f := p.OutboxDepth; f != nil {
		c.probe(descOutboxDepth, func() {
			high, low := f()
			ch <- prometheus.MustNewConstMetric(descOutboxDepth, prometheus.GaugeValue, float64(high), priorityHigh)
			ch <- prometheus.MustNewConstMetric(descOutboxDepth, prometheus.GaugeValue, float64(low), priorityLow)
		})
	}
	if f := p.LastPollSuccess; f != nil {
		c.probe(descLastPollSuccess, func() {
			if t := f(); !t.IsZero() {
				ch <- prometheus.MustNewConstMetric(descLastPollSuccess, prometheus.GaugeValue, float64(t.UnixMilli())/1e3)
			}
		})
	}
}

// probe runs one probe. A probe that panics loses its metric for this
// scrape, and only that: the collector runs on a goroutine of the
// scrape, where a panic would end the daemon.
func (c probeCollector) probe(d *prometheus.Desc, f func()) {
	defer func() {
		if r := recover(); r != nil {
			c.m.log.Error().Str("metric", d.String()).Interface("panic", r).Msg("a metrics probe panicked; its metric is left out of this scrape")
		}
	}()
	f()
}

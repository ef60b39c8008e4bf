package metrics

import (
	"time"

	svc "github.com/untether/untether/internal/service/metrics"
)

// setProbes makes each scrape read the engine's levels through the Host:
// what the pool, the chats and the outbox keep anyway, so a missed event
// can never leave a level wrong.
func (m *Module) setProbes() {
	h := m.host
	m.m.SetProbes(svc.Probes{
		LiveCLIs:         func() int { return h.PoolStats().Live },
		WaitingForSlot:   func() int { return h.PoolStats().Waiting },
		PendingApprovals: func() int { return h.Stats().PendingApprovals },
		OutboxDepth: func() (high, low int) {
			st := h.OutboxStats()
			return st.QueuedHigh, st.QueuedLow
		},
		ChatsInPenalty:  func() int { return h.OutboxStats().Paused },
		LastPollSuccess: func() time.Time { return h.LastPollSuccess() },
	})
}

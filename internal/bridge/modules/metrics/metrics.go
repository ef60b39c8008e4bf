package metrics

import (
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
	svc "github.com/untether/untether/internal/service/metrics"
)

// Module is the feature.
type Module struct {
	host *chat.Host
	m    *svc.Metrics
	// turns is each chat's turn and CLI, as the metrics follow them; only
	// its actor touches it.
	turns chat.Slot[chatTurns]

	mu sync.Mutex
	// results are the times the bridge took turns' results, per chat, not
	// yet matched with their answer's delivery (delivery.go).
	results map[outbox.ChatKey][]time.Time
	// shown is when each chat's progress message last changed on
	// Telegram's side (delivery.go).
	shown map[outbox.ChatKey]time.Time
	// version is the CLI version last set.
	version string
}

// New builds the module over the daemon's metrics (Host.Metrics); without
// them it registers nothing.
func New(h *chat.Host) *Module {
	return &Module{host: h, m: h.Metrics(), results: map[outbox.ChatKey][]time.Time{}, shown: map[outbox.ChatKey]time.Time{}}
}

// Register adds the hooks and the probes.
func (m *Module) Register(r *chat.Registry) {
	if m.m == nil {
		return
	}
	m.turns = chat.NewSlot[chatTurns](r)
	r.OnEvent(m.onEvent) // turns.go
	// First of the answer hooks, before the answer is made: when the
	// bridge took the result (delivery.go). It never answers the turn.
	r.InterceptAnswer(func(c *chat.Chat, _ runner.TurnCompleted, _ int) bool { m.tookResult(c); return false })
	r.OnDelivered(m.delivered) // delivery.go
	r.OnRateLimited(func(_ outbox.ChatKey, retryAfter time.Duration) { m.m.Penalty(retryAfter) })
	r.OnApprovalEnd(func(c *chat.Chat, a *chat.Approval, d state.Decision) {
		m.m.ApprovalWait(time.Since(a.Created()), decision(d))
	})
	m.setProbes() // probes.go
}

// decision is the metric's label for how an approval ended.
func decision(d state.Decision) svc.Decision {
	switch d {
	case state.DecisionAllow, state.DecisionAlways:
		return svc.DecisionApproved
	case state.DecisionDeny:
		return svc.DecisionDenied
	case state.DecisionAnswer:
		return svc.DecisionAnswered
	case state.DecisionExpired:
		return svc.DecisionExpired
	case state.DecisionWithdrawn, state.DecisionInterrupted:
		return svc.DecisionStopped
	}
	return svc.DecisionOther
}

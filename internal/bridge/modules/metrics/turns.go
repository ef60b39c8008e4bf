package metrics

import (
	"strings"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/runner"
	svc "github.com/untether/untether/internal/service/metrics"
)

// chatTurns is what the metrics follow of one chat.
type chatTurns struct {
	// open: the CLI started a turn (system/init) that has not ended yet;
	// project is where it runs.
	open    bool
	project string
	// rejected: a rate_limit_event rejected the open turn (a
	// subscription limit).
	rejected bool
	// crashed: the chat's last CLI died unasked, so its next spawn is a
	// restart.
	crashed bool
}

func (m *Module) onEvent(c *chat.Chat, ev runner.Event) {
	st := m.turns.Get(c)
	switch e := ev.(type) {
	case runner.TurnStarted:
		m.noteVersion(e.Version)
		if !st.open {
			st.open, st.project, st.rejected = true, project(c), false
			m.m.TurnStarted(st.project)
		}
	case runner.RateLimit:
		if e.Status == "rejected" {
			st.rejected = true
		}
	case runner.TurnCompleted:
		p := project(c)
		if st.open {
			p = st.project
			m.m.TurnFinished(p, m.outcome(e, st.rejected))
			st.open = false
		}
		m.m.Cost(p, e.CostUSD, svc.Tokens{Input: e.Usage.InputTokens, Output: e.Usage.OutputTokens,
			CacheRead: e.Usage.CacheReadInputTokens, CacheCreation: e.Usage.CacheCreationInputTokens})
	case runner.ProcessStarted:
		p := project(c)
		m.m.CLISpawned(p)
		if st.crashed {
			m.m.CLIRestarted(p)
			st.crashed = false
		}
	case runner.ProcessExited:
		p := project(c)
		if !e.Requested {
			m.m.CLICrashed(p)
		}
		st.crashed = !e.Requested
		if st.open {
			o := svc.OutcomeCrashed
			if e.Requested {
				o = m.stopped()
			}
			m.m.TurnFinished(st.project, o)
			st.open = false
		}
	}
}

// outcome is how a turn that reported its result ended.
func (m *Module) outcome(tc runner.TurnCompleted, rejected bool) svc.Outcome {
	switch {
	case tc.Aborted():
		return m.stopped()
	case strings.HasPrefix(tc.Subtype, "error_max_budget"), rejected && !tc.OK:
		return svc.OutcomeLimited
	case !tc.OK:
		return svc.OutcomeFailed
	}
	return svc.OutcomeAnswered
}

// stopped is the outcome of a turn untether interrupted: for a restart
// while it drains, else because a person asked (/cancel, Cancel).
func (m *Module) stopped() svc.Outcome {
	if m.host.Draining() {
		return svc.OutcomeStopped
	}
	return svc.OutcomeCancelled
}

// project is the project the chat's CLI runs in.
func project(c *chat.Chat) string { return c.SessionPlace().Project }

// noteVersion sets the CLI version the turns report, when it changed
// (the binary was upgraded under a running daemon).
func (m *Module) noteVersion(v string) {
	if v == "" {
		return
	}
	m.mu.Lock()
	changed := v != m.version
	m.version = v
	m.mu.Unlock()
	if changed {
		m.m.SetCLIVersion(v)
	}
}

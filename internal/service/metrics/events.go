package metrics

import (
	"math"
	"time"
)

// TurnStarted counts a turn started in project.
func (m *Metrics) TurnStarted(project string) {
	if m == nil {
		return
	}
	m.turnsStarted.WithLabelValues(project).Inc()
}

// TurnFinished counts a turn of project that ended with o.
func (m *Metrics) TurnFinished(project string, o Outcome) {
	if m == nil {
		return
	}
	m.turnsFinished.WithLabelValues(project, oneOf(o, outcomes)).Inc()
}

// Cost adds what a turn of project cost, as the CLI reported it. A
// negative, NaN or infinite cost (a broken report) is not added: a counter
// holds it for good.
func (m *Metrics) Cost(project string, usd float64, t Tokens) {
	if m == nil {
		return
	}
	if usd > 0 && !math.IsInf(usd, 0) {
		m.costUSD.WithLabelValues(project).Add(usd)
	}
	for _, k := range []struct {
		kind string
		n    int64
	}{{kindInput, t.Input}, {kindOutput, t.Output}, {kindCacheRead, t.CacheRead}, {kindCacheCreation, t.CacheCreation}} {
		if k.n > 0 {
			m.tokens.WithLabelValues(project, k.kind).Add(float64(k.n))
		}
	}
}

// AnswerLatency observes the time from the bridge taking a turn's result
// to the sendMessage call that delivered its answer's first part.
func (m *Metrics) AnswerLatency(d time.Duration) {
	if m == nil {
		return
	}
	m.answerLatency.Observe(d.Seconds())
}

// ProgressStaleness observes how long a progress message showed what it
// showed before an edit replaced it (between the calls that got through).
func (m *Metrics) ProgressStaleness(d time.Duration) {
	if m == nil {
		return
	}
	m.progressStaleness.Observe(d.Seconds())
}

// BotAPICall counts one Bot API call by its method and the HTTP status of
// the answer (Telegram answers with its error_code as the status; 429 is
// a flood wait); code 0 is a call that got no answer.
func (m *Metrics) BotAPICall(method string, code int) {
	if m == nil {
		return
	}
	m.botAPICalls.WithLabelValues(methodLabel(method), statusLabel(code)).Inc()
}

// Penalty adds the retry_after of a 429: time a chat may not call.
func (m *Metrics) Penalty(retryAfter time.Duration) {
	if m == nil || retryAfter <= 0 {
		return
	}
	m.penalty.Add(retryAfter.Seconds())
}

// UpdateLag observes the time from an update's date to the getUpdates
// response that brought it.
func (m *Metrics) UpdateLag(d time.Duration) {
	if m == nil {
		return
	}
	m.updateLag.Observe(max(d, 0).Seconds())
}

// StateWriteRefused counts a state write of kind (updates, chat, outbox,
// …) that the storage refused.
func (m *Metrics) StateWriteRefused(kind string) {
	if m == nil {
		return
	}
	m.stateRefuse.WithLabelValues(writeKindLabel(kind)).Inc()
}

// WebhookDelivery counts a delivery to trigger (a configured name, or
// "_unknown") with its result.
func (m *Metrics) WebhookDelivery(trigger, result string) {
	if m == nil {
		return
	}
	m.webhooks.WithLabelValues(trigger, result).Inc()
}

// CLISpawned counts a CLI started for project.
func (m *Metrics) CLISpawned(project string) {
	if m == nil {
		return
	}
	m.cliSpawns.WithLabelValues(project).Inc()
}

// CLICrashed counts a CLI of project that died unasked.
func (m *Metrics) CLICrashed(project string) {
	if m == nil {
		return
	}
	m.cliCrashes.WithLabelValues(project).Inc()
}

// CLIRestarted counts a CLI of project started again after a crash.
func (m *Metrics) CLIRestarted(project string) {
	if m == nil {
		return
	}
	m.cliRestarts.WithLabelValues(project).Inc()
}

// SetCLIVersion sets untether_claude_cli_info to version, the one series.
func (m *Metrics) SetCLIVersion(version string) {
	if m == nil {
		return
	}
	m.cliInfo.Reset()
	m.cliInfo.WithLabelValues(versionLabel(version)).Set(1)
}

// ApprovalWait observes how long an approval waited until d.
func (m *Metrics) ApprovalWait(wait time.Duration, d Decision) {
	if m == nil {
		return
	}
	m.approvalWait.WithLabelValues(oneOf(d, decisions)).Observe(wait.Seconds())
}

package service

import (
	"fmt"
	"time"

	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/service/metrics"
)

// StateCondition is the name of the /healthz trouble StateFaults raises.
const StateCondition = "state"

// StateFaults tells the operator what the daemon's state writes go
// through (it fits durable.Watcher, which the bridge takes as
// Options.StateWatch): each write the disk refused counts in
// untether_state_writes_refused_total, and an episode of refused writes
// shows in /healthz (which stays 200: a restart would lose the writes kept
// in memory) from its first refusal until everything is saved again.
type StateFaults struct {
	Metrics    *metrics.Metrics
	Conditions *health.Conditions
}

// WriteRefused counts a refused write of kind.
func (f StateFaults) WriteRefused(kind string) { f.Metrics.StateWriteRefused(kind) }

// Refusing raises the condition: writes are refused since since.
func (f StateFaults) Refusing(err error, since time.Time) {
	f.Conditions.Raise(StateCondition, fmt.Errorf("state writes are refused and kept in memory until they succeed, "+
		"so a restart now would lose them: %w", err), since)
}

// Saved clears the condition: every kept write is saved.
func (f StateFaults) Saved() { f.Conditions.Clear(StateCondition) }

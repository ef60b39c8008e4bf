package metrics

import (
	"regexp"
	"strconv"
)

// Outcome is how a turn ended: the outcome label of
// untether_turns_finished_total.
type Outcome string

// The outcomes. Anything else is counted as OutcomeOther.
const (
	// OutcomeAnswered: the CLI reported a result and the answer was sent.
	OutcomeAnswered Outcome = "answered"
	// OutcomeFailed: the CLI reported an error result.
	OutcomeFailed Outcome = "failed"
	// OutcomeCancelled: a person stopped it (/cancel, Cancel).
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeStopped: a restart or a drain stopped it.
	OutcomeStopped Outcome = "stopped"
	// OutcomeCrashed: the CLI died during the turn.
	OutcomeCrashed Outcome = "crashed"
	// OutcomeLimited: a budget or a subscription limit ended it.
	OutcomeLimited Outcome = "limited"
	OutcomeOther   Outcome = "other"
)

var outcomes = []Outcome{OutcomeAnswered, OutcomeFailed, OutcomeCancelled, OutcomeStopped, OutcomeCrashed, OutcomeLimited, OutcomeOther}

// Decision is how an approval ended: the decision label of
// untether_approval_wait_seconds.
type Decision string

// The decisions. Anything else is counted as DecisionOther.
const (
	DecisionApproved Decision = "approved"
	DecisionDenied   Decision = "denied"
	// DecisionAnswered: a question (AskUserQuestion) a person answered.
	DecisionAnswered Decision = "answered"
	// DecisionExpired: nobody answered within claude.approval_timeout.
	DecisionExpired Decision = "expired"
	// DecisionStopped: the turn ended (cancelled, stopped by a restart)
	// while the approval waited.
	DecisionStopped Decision = "stopped"
	DecisionOther   Decision = "other"
)

var decisions = []Decision{DecisionApproved, DecisionDenied, DecisionAnswered, DecisionExpired, DecisionStopped, DecisionOther}

// Tokens are a turn's token counts by kind, as the CLI reports its usage.
type Tokens struct {
	Input, Output, CacheRead, CacheCreation int64
}

// The kind label of untether_tokens_total.
const (
	kindInput         = "input"
	kindOutput        = "output"
	kindCacheRead     = "cache_read"
	kindCacheCreation = "cache_creation"
)

// The priority label of untether_outbox_queue_depth.
const (
	priorityHigh = "high"
	priorityLow  = "low"
)

// other replaces a label value that is not one of a fixed set or shape.
const other = "other"

// oneOf returns v when it is one of valid, else other.
func oneOf[T ~string](v T, valid []T) string {
	for _, x := range valid {
		if v == x {
			return string(x)
		}
	}
	return other
}

// methodLabel keeps a Bot API method name (sendMessage, getUpdates, …):
// 1 to 40 ASCII letters. A loop, not a regexp: it runs on every call.
func methodLabel(m string) string {
	if len(m) == 0 || len(m) > 40 {
		return other
	}
	for i := range len(m) {
		if c := m[i] | 0x20; c < 'a' || c > 'z' { // | 0x20 folds to lower case
			return other
		}
	}
	return m
}

// statusLabels holds the label of every HTTP status, made once, so that
// counting a call allocates nothing.
var statusLabels = func() []string {
	l := make([]string, 600)
	for code := 100; code < len(l); code++ {
		l[code] = strconv.Itoa(code)
	}
	return l
}()

// statusLabel is an HTTP status (Telegram answers with its error_code as
// the status), "network" for a call that got no answer.
func statusLabel(code int) string {
	switch {
	case code == 0:
		return "network"
	case code >= 100 && code < len(statusLabels):
		return statusLabels[code]
	}
	return other
}

// kindPattern is a state write's kind (updates, chat, outbox, …).
var kindPattern = regexp.MustCompile(`^[a-z][a-z_]{0,31}$`)

func writeKindLabel(k string) string {
	if kindPattern.MatchString(k) {
		return k
	}
	return other
}

// versionPattern is the shape of a version the CLI or the build reports.
var versionPattern = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

func versionLabel(v string) string {
	if versionPattern.MatchString(v) {
		return v
	}
	return "unknown"
}

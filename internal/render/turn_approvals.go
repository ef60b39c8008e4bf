package render

import "github.com/untether/untether/internal/runner"

// askedTool is a tool call the CLI asked the user about.
type askedTool struct {
	RequestID runner.RequestID
	ToolUseID runner.ToolUseID
	Expired   bool // nobody answered; the bridge denied it
}

// pendingApproval is an approval request not yet decided or withdrawn.
type pendingApproval struct {
	RequestID runner.RequestID
	ToolUseID runner.ToolUseID
	Tool      string
}

// PendingApprovals is the number of approval requests awaiting a decision.
func (t *Turn) PendingApprovals() int { return len(t.pending) }

// Expire records that nobody answered approval request id in time and the
// caller denied it, so the refusal is not put down to the user. It reports
// whether the request was pending.
func (t *Turn) Expire(id runner.RequestID) bool {
	for i := range t.asked {
		if t.asked[i].RequestID == id {
			t.asked[i].Expired = true
		}
	}
	return t.Resolve(id)
}

// Resolve records that the caller answered approval request id, which the
// CLI does not echo back as an event. It reports whether the request was
// pending.
func (t *Turn) Resolve(id runner.RequestID) bool {
	for i, p := range t.pending {
		if p.RequestID == id {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			t.rev++
			t.restRev++
			return true
		}
	}
	return false
}

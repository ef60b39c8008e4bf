package render

import (
	"strings"

	"github.com/untether/untether/internal/runner"
)

// permissionWhy says in a few words why the CLI's permission check let a
// tool call run or refused it, from tool_result_meta: "denied by you",
// "blocked by a permission rule", "allowed by acceptEdits mode". It is ""
// when there is nothing worth saying: the user approved the call, or the
// default mode let a harmless one through.
//
// The CLI reports a host's deny as source user_reject, and in SDK sessions
// also a deny rule from the user's own settings, so "denied by you" is said
// only for a call this turn really asked about; a request that expired
// unanswered is denied by the bridge, not by the user.
func (t *Turn) permissionWhy(e runner.ToolFinished) string {
	asked, expired := false, false
	for _, a := range t.asked {
		if a.ToolUseID != "" && a.ToolUseID == e.ID {
			asked, expired = true, a.Expired
		}
	}
	if p := e.Permission; p != nil {
		switch p.Decision {
		case "reject":
			switch {
			case p.Source == "user_reject" && expired:
				return "denied: nobody answered in time"
			case p.Source == "user_reject" && asked:
				return "denied by you"
			case p.Source == "user_abort":
				return t.stoppedBy()
			case p.Source == "hook" || p.ReasonType == "hook":
				// What the hook wrote is why; the user cannot see it elsewhere.
				if msg := runner.HookMessage(e.Preview); msg != "" {
					return "blocked by a hook: " + Truncate(oneLine(msg), hookMessageMax)
				}
				return "blocked by a hook"
			case p.Source == "classifier" || p.ReasonType == "classifier":
				return "blocked by the auto-mode classifier"
			case p.ReasonType == "mode":
				return "blocked by " + modeName(t.Mode)
			case p.ReasonType == "rule" || p.Source == "user_reject":
				return "blocked by a permission rule"
			}
			return "refused by the permission check"
		case "cancelled":
			return "cancelled before it ran"
		case "accept":
			switch {
			case p.ReasonType == "mode" && t.Mode != "" && t.Mode != runner.ModeDefault:
				return "allowed by " + modeName(t.Mode)
			case p.ReasonType == "rule":
				return "allowed by a permission rule"
			case p.Source == "classifier" || p.ReasonType == "classifier":
				return "allowed by the auto-mode classifier"
			case p.Source == "hook" || p.ReasonType == "hook":
				return "allowed by a hook"
			}
			return ""
		}
	}
	switch k := e.NotRun; {
	case k == "user-rejected" && expired:
		return "denied: nobody answered in time"
	case k == "user-rejected":
		// A deny that also interrupts, or a cancel while the call waited
		// or ran: both come from the user, unless a restart sent them.
		return t.stoppedBy()
	case k == "permission-rule":
		return "blocked by a permission rule"
	case strings.HasPrefix(k, "automode"):
		return "blocked by auto mode"
	case k == "interrupted":
		return "interrupted"
	case k == "cancelled":
		return "cancelled"
	}
	return ""
}

// hookMessageMax bounds a blocking hook's message in a row.
const hookMessageMax = 120

// deniedWhy explains a system/permission_denied frame by its
// decision_reason_type, for CLIs whose results carry no tool_result_meta.
func deniedWhy(reasonType string, mode runner.PermissionMode) string {
	switch reasonType {
	case "mode":
		return "blocked by " + modeName(mode)
	case "rule":
		return "blocked by a permission rule"
	case "hook":
		return "blocked by a hook"
	case "classifier":
		return "blocked by the auto-mode classifier"
	}
	return "refused by the permission check"
}

// modeName is "dontAsk mode", or "the permission mode" when unknown.
func modeName(m runner.PermissionMode) string {
	if s := oneLine(string(m)); s != "" {
		return Truncate(s, 30) + " mode"
	}
	return "the permission mode"
}

// askReason says why the CLI asks about a tool call, from its
// decision_reason_type and the deciding check's own words.
func askReason(req runner.ApprovalRequested) string {
	var why string
	switch req.ReasonType {
	case "rule":
		why = "a permission rule asks for this"
	case "mode":
		why = "the permission mode asks for this"
	case "subcommandResults":
		why = "a part of this command needs approval"
	case "permissionPromptTool":
		why = "the approval tool asked"
	case "hook":
		why = "a hook asked for approval"
	case "asyncAgent":
		why = "a background agent needs approval"
	case "sandboxOverride":
		why = "this runs outside the sandbox"
	case "workingDir":
		why = "this is outside the working directory"
	case "safetyCheck":
		why = "a safety check flagged this"
	case "classifier":
		why = "the auto-mode classifier wants a person to decide"
	}
	detail := oneLine(req.Reason)
	switch {
	case why == "" && detail == "":
		return ""
	case why == "":
		return detail
	case detail == "":
		return why
	}
	return why + ": " + detail
}

// stoppedBy says who stopped a tool call the turn's interruption cut short.
func (t *Turn) stoppedBy() string {
	if t.StoppedForRestart {
		return "stopped by the restart"
	}
	return "stopped by you"
}

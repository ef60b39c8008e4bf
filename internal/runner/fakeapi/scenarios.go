package fakeapi

// Rule builders for the scenarios the real-CLI tests of several packages
// share. Each is keyed by a marker word in the user's prompt.

// ToolTurn answers a prompt containing marker with one tool call, and the
// request that carries its result with the text after.
func ToolTurn(marker, tool string, input map[string]any, after string) []Rule {
	yes, no := Bool(true), Bool(false)
	return []Rule{
		{Name: marker + "-after", When: Match{AnyUserContains: marker, LastIsToolResult: yes},
			Replies: []Reply{Text(after)}},
		{Name: marker, When: Match{PromptContains: marker, LastIsToolResult: no},
			Replies: []Reply{ToolUse(tool, input)}},
	}
}

// PlanTurn is plan mode's flow: the model writes its plan to the plan file
// the CLI asks for, calls ExitPlanMode, and once the plan is approved says
// "Plan approved; starting work.".
func PlanTurn(marker string) []Rule {
	yes, no := Bool(true), Bool(false)
	return []Rule{
		{Name: marker + "-after", When: Match{AnyUserContains: marker, LastIsToolResult: yes, UserContains: "approved"},
			Replies: []Reply{Text("Plan approved; starting work.")}},
		{Name: marker + "-exit", When: Match{AnyUserContains: marker, LastIsToolResult: yes},
			Replies: []Reply{ToolUse("ExitPlanMode", map[string]any{})}},
		{Name: marker + "-write", When: Match{PromptContains: marker, LastIsToolResult: no},
			Replies: []Reply{ToolUse("Write", map[string]any{"file_path": "{{plan_path}}", "content": "# Plan\n\n1. Add a button.\n2. Colour it blue.\n"})}},
	}
}

// AskTurn asks "Which colour should the button be?" (Red or Blue) with
// AskUserQuestion, then says "Thanks, going with your answer.".
func AskTurn(marker string) []Rule {
	return ToolTurn(marker, "AskUserQuestion", map[string]any{"questions": []any{map[string]any{
		"question": "Which colour should the button be?", "header": "Colour", "multiSelect": false,
		"options": []any{
			map[string]any{"label": "Red", "description": "A red button"},
			map[string]any{"label": "Blue", "description": "A blue button"},
		}}}}, "Thanks, going with your answer.")
}

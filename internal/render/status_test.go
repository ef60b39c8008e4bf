package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
)

func TestStatusGolden(t *testing.T) {
	now := base.Add(3 * time.Hour)
	tests := []struct {
		name string
		s    render.StatusInfo
	}{
		{"active", render.StatusInfo{SessionID: "605d1bf7-3cec-4407-b87c-fafb31b34500", Model: "claude-opus-5-5", Effort: "high", Mode: "acceptEdits",
			Login: "an API key (ANTHROPIC_API_KEY)", ContextPercent: 12.4, CostUSD: 0.1234, Turns: 7, ProcessState: "running", PendingApprovals: 2,
			Pending: []render.PendingItem{{Tool: "Bash", Summary: "echo hi > out.txt", Since: now.Add(-90 * time.Second)},
				{Tool: "AskUserQuestion", Summary: "Which <colour>?", Since: now.Add(-10 * time.Second)}},
			Workdir: "/home/dev/project", LastActive: now.Add(-5*time.Minute - 3*time.Second), Now: now}},
		{"fresh", render.StatusInfo{Model: "claude-opus-5-5", Mode: "default", ProcessState: "stopped", Workdir: "/srv/app", Now: now}},
		{"yesterday", render.StatusInfo{SessionID: "s", ProcessState: "idle", Turns: 1, CostUSD: 2.5, ContextPercent: 0.4,
			LastActive: now.Add(-26 * time.Hour), Now: now}},
		{"hostile", render.StatusInfo{SessionID: hostile, Model: hostile, Effort: hostile, Mode: hostile, Login: hostile, ProcessState: hostile,
			Workdir: hostile + strings.Repeat("/very/long/path", 100), LastActive: now, Now: now}},
	}
	var b strings.Builder
	for _, tt := range tests {
		got := render.RenderStatus(tt.s)
		checkMessage(t, got)
		fmt.Fprintf(&b, "── %s ──\n%s\n", tt.name, got)
	}
	checkRenderGolden(t, "status", "status", b.String())
}

func TestStatusFields(t *testing.T) {
	got := render.HTMLToPlain(render.RenderStatus(render.StatusInfo{}))
	assert.Contains(t, got, "Session: none yet")
	assert.Contains(t, got, "Last active: never")
	assert.Contains(t, got, "Model: —")
	assert.NotContains(t, got, "Pending approvals", "shown only when there are some")
}

func TestStatusListsPendingRequests(t *testing.T) {
	now := base
	var pending []render.PendingItem
	for i := range 12 {
		pending = append(pending, render.PendingItem{Tool: "Bash", Summary: fmt.Sprintf("make target%d", i), Since: now.Add(-time.Minute)})
	}
	got := render.HTMLToPlain(render.RenderStatus(render.StatusInfo{Pending: pending, Now: now}))
	assert.Contains(t, got, "Pending approvals: 12")
	assert.Contains(t, got, "• Bash: make target0 · waiting 1m")
	assert.Contains(t, got, "• Bash: make target9")
	assert.NotContains(t, got, "target10")
	assert.Contains(t, got, "… 2 more")
}

func TestHelpGolden(t *testing.T) {
	cmds := []render.CommandHelp{
		{"/new", "start a new session"},
		{"cancel", "stop the running turn"},
		{"status", "show the session's state"},
		{"mode", "set the permission mode: default, acceptEdits, plan, <bypass> & co"},
		{"verbose", ""},
	}
	got := render.RenderHelp(cmds)
	checkMessage(t, got)
	checkRenderGolden(t, "status", "help", got+"\n")
}

func TestHelpFitsLimit(t *testing.T) {
	var cmds []render.CommandHelp
	for i := range 300 {
		cmds = append(cmds, render.CommandHelp{Command: fmt.Sprintf("cmd%d", i), Description: strings.Repeat("does <things> & ", 20)})
	}
	got := render.RenderHelp(cmds)
	checkMessage(t, got)
	assert.Contains(t, got, "/cmd0 — ")
	assert.Regexp(t, `… and \d+ more commands$`, got)
}

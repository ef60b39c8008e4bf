package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A daemon with several projects names the one each answer, progress
// message and status is about, and can show how to go on at a terminal.
func TestProjectIsShown(t *testing.T) {
	tc := runner.TurnCompleted{OK: true, Subtype: "success", Answer: "done", CostUSD: 0.0042, Duration: 12 * time.Second}
	meta := footerMeta
	meta.Project = "api · feature"
	meta.ResumeLine = "claude --resume 1234-abcd"
	chunks := render.RenderFinal(tc, meta)
	require.Len(t, chunks, 1)
	assert.True(t, strings.HasSuffix(chunks[0], wantFooter+" · 📁 api · feature\n<code>claude --resume 1234-abcd</code>"), chunks[0])

	plain := render.RenderFinal(tc, footerMeta)
	assert.NotContains(t, plain[0], "📁", "nothing when there is no project to name")
	assert.NotContains(t, plain[0], "<code>")

	turn := render.NewTurn(time.Unix(1000, 0))
	turn.Project = "api"
	html, _ := render.RenderProgress(turn, render.ProgressOptions{Now: time.Unix(1005, 0)})
	header, _, _ := strings.Cut(html, "\n")
	assert.Contains(t, header, " · 📁 api")

	status := render.RenderStatus(render.StatusInfo{Project: "gpu", Workdir: "dev@gpu01:~/src/model"})
	assert.Contains(t, status, "\nProject: gpu\nWorkdir: <code>dev@gpu01:~/src/model</code>")
	assert.NotContains(t, render.RenderStatus(render.StatusInfo{Workdir: "/x"}), "Project:")
}

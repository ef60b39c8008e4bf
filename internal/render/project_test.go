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

// A resume line is a command: it is shown whole or not at all, never cut
// short nor with its white space changed (a quoted directory may hold two
// spaces), in the answer's footer and in /status.
func TestResumeLineIsShownWhole(t *testing.T) {
	tc := runner.TurnCompleted{OK: true, Subtype: "success", Answer: "done", CostUSD: 0.0042, Duration: 12 * time.Second}
	long := "cd '/srv/" + strings.Repeat("x", 300) + "/a  b' && env HOME='/srv/claude home' claude --resume 5f0c0000-0000-4000-8000-000000000000"
	for _, tt := range []struct {
		name, line, want string
	}{
		{"long, with two spaces", long, "<code>" + render.EscapeHTML(long) + "</code>"},
		{"over the limit", "cd '/" + strings.Repeat("y", render.ResumeLineMax) + "' && claude --resume x", ""},
		{"on two lines", "cd '/a\nb' && claude --resume x", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			meta := footerMeta
			meta.ResumeLine = tt.line
			final := render.RenderFinal(tc, meta)
			status := render.RenderStatus(render.StatusInfo{ResumeLine: tt.line})
			if tt.want == "" {
				assert.NotContains(t, final[len(final)-1], "<code>")
				assert.NotContains(t, status, "At a terminal")
				return
			}
			assert.True(t, strings.HasSuffix(final[len(final)-1], wantFooter+"\n"+tt.want), final[len(final)-1])
			assert.True(t, strings.HasSuffix(status, "\n💻 At a terminal: "+tt.want), status)
		})
	}
}

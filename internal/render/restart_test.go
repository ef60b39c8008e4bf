package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A turn a restart interrupted says so, in its header, its stopped tool
// call and its answer; the same turn stopped by the user says that.
func TestStoppedForRestartIsNotCancelled(t *testing.T) {
	for _, restart := range []bool{false, true} {
		turn := render.NewTurn(base)
		turn.StoppedForRestart = restart
		at := base
		for _, ev := range []runner.Event{started(),
			runner.ToolStarted{ID: "toolu_1", Name: "Bash", Summary: "sleep 60"},
			runner.ToolFinished{ID: "toolu_1", Name: "Bash", OK: false, NotRun: "user-rejected"},
			runner.TurnCompleted{TerminalReason: "aborted_tools"},
		} {
			at = at.Add(time.Second)
			turn.Apply(ev, at)
		}
		progress, _ := render.RenderProgress(turn, render.ProgressOptions{Now: at})
		compact := render.RenderProgressFinal(turn, render.ProgressOptions{Now: at})
		final := strings.Join(render.RenderFinal(*turn.Result, render.FinalMeta{Happened: turn.Happened(), StoppedForRestart: restart}), "\n")
		all := progress + "\n" + compact + "\n" + final
		if restart {
			assert.Contains(t, progress, "⏸ <b>Stopped for a restart</b>")
			assert.Contains(t, progress, "stopped by the restart")
			assert.Contains(t, compact, "⏸ <b>Stopped for a restart</b>")
			assert.Contains(t, final, "⏸ <b>Stopped for a restart.</b>")
			assert.NotContains(t, all, "Cancelled")
			assert.NotContains(t, all, "by you")
			assert.NotContains(t, all, "⏹")
		} else {
			assert.Contains(t, progress, "⏹ <b>Cancelled</b>")
			assert.Contains(t, progress, "stopped by you")
			assert.Contains(t, final, "⏹ <b>Stopped.</b>")
			assert.NotContains(t, all, "restart")
		}
	}
}

package render_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// alert is the default thresholds (0.8 and 0.95 in the config) with a
// compaction state.
func alert(c render.Compaction, autoAt float64) render.ContextAlert {
	return render.ContextAlert{WarnAt: 80, FullAt: 95, Compaction: c, AutoAt: autoAt}
}

func TestContextLevel(t *testing.T) {
	a := alert(render.CompactionAuto, 96.7)
	for _, tt := range []struct {
		percent float64
		want    render.ContextLevel
	}{
		{0, render.ContextOK}, {79.99, render.ContextOK}, {80, render.ContextWarn}, {94.9, render.ContextWarn},
		{95, render.ContextFull}, {100, render.ContextFull}, {125, render.ContextFull},
	} {
		assert.Equal(t, tt.want, a.Level(tt.percent), "%v", tt.percent)
	}
	assert.Equal(t, render.ContextOK, render.ContextAlert{}.Level(99), "no thresholds, no warning")
	assert.Equal(t, render.ContextWarn, render.ContextAlert{WarnAt: 80}.Level(99), "no second threshold")
}

// TestContextOffersCompact: the button comes with the warning, from the
// footer's own share (meta's, else the result's), unless /compact is off.
func TestContextOffersCompact(t *testing.T) {
	tc := func(pct float64) runner.TurnCompleted {
		return runner.TurnCompleted{OK: true, Answer: "ok", ContextPercent: pct}
	}
	for _, tt := range []struct {
		name string
		tc   runner.TurnCompleted
		meta render.FinalMeta
		want bool
	}{
		{"below", tc(79), render.FinalMeta{Context: alert(render.CompactionAuto, 96.7)}, false},
		{"warn", tc(80), render.FinalMeta{Context: alert(render.CompactionAuto, 96.7)}, true},
		{"full, auto off", tc(96), render.FinalMeta{Context: alert(render.CompactionManual, 0)}, true},
		{"unknown", tc(85), render.FinalMeta{Context: alert(render.CompactionUnknown, 0)}, true},
		{"compaction off", tc(96), render.FinalMeta{Context: alert(render.CompactionOff, 0)}, false},
		{"meta's share wins", tc(10), render.FinalMeta{ContextPercent: 85, Context: alert(render.CompactionAuto, 96.7)}, true},
		{"no thresholds", tc(99), render.FinalMeta{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.meta.OffersCompact(tt.tc))
			chunks := render.RenderFinal(tt.tc, tt.meta)
			assert.Equal(t, tt.meta.ContextLevel(tt.tc) >= render.ContextWarn, strings.Contains(chunks[len(chunks)-1], "⚠️"), "the footer warns")
		})
	}
}

func TestCompactKeyboard(t *testing.T) {
	kb := render.CompactKeyboard("c:0123456789abcdef")
	checkKeyboard(t, kb)
	assert.Equal(t, "[keyboard] [🗜 Compact → c:0123456789abcdef]\n", formatKeyboard(kb))
	assert.ErrorIs(t, render.CompactKeyboard(strings.Repeat("x", 65)).Validate(), render.ErrCallbackData)
	assert.ErrorIs(t, render.CompactKeyboard("").Validate(), render.ErrButtonAction)
}

// TestContextGolden renders answers at each level and compaction state,
// with the effort in the footer.
func TestContextGolden(t *testing.T) {
	ok := func(pct float64) runner.TurnCompleted {
		return runner.TurnCompleted{OK: true, Subtype: "success", Answer: "Done.", CostUSD: 0.0042, ContextPercent: pct, Duration: 12 * time.Second}
	}
	meta := func(a render.ContextAlert) render.FinalMeta {
		return render.FinalMeta{Model: "claude-opus-5-5", Effort: "high", Context: a}
	}
	tests := []struct {
		name string
		tc   runner.TurnCompleted
		meta render.FinalMeta
	}{
		{"below-warning", ok(42), meta(alert(render.CompactionAuto, 96.7))},
		{"warning", ok(85.2), meta(alert(render.CompactionAuto, 96.7))},
		{"full-auto", ok(95.4), meta(alert(render.CompactionAuto, 96.7))},
		{"full-past-auto", ok(97.2), meta(alert(render.CompactionAuto, 96.7))},
		{"full-auto-at-unknown", ok(96), meta(alert(render.CompactionAuto, 0))},
		{"full-auto-off", ok(96), meta(alert(render.CompactionManual, 0))},
		{"full-compaction-off", ok(99), meta(alert(render.CompactionOff, 0))},
		{"full-unknown", ok(96), meta(alert(render.CompactionUnknown, 0))},
		{"no-effort", ok(3), render.FinalMeta{Model: "claude-opus-5-5"}},
		{"hostile-effort", ok(3), render.FinalMeta{Effort: hostile}},
		{"full-with-notes", ok(98), render.FinalMeta{Model: "claude-opus-5-5", Notes: []string{"⏰ Scheduled: daily report"},
			Context: alert(render.CompactionAuto, 96.7)}},
	}
	var b strings.Builder
	for _, tt := range tests {
		chunks := render.RenderFinal(tt.tc, tt.meta)
		fmt.Fprintf(&b, "══ %s · offers compact: %v ══\n%s", tt.name, tt.meta.OffersCompact(tt.tc), formatFinal(t, chunks))
	}
	checkRenderGolden(t, "final", "context", b.String())
}

// TestContextNoteOnlyWhenFull: the note on what happens next comes at the
// second threshold, not before, and goes on the last chunk of a long
// answer with the footer.
func TestContextNoteOnlyWhenFull(t *testing.T) {
	a := alert(render.CompactionAuto, 96.7)
	warn := render.HTMLToPlain(render.RenderFinal(runner.TurnCompleted{OK: true, Answer: "ok", ContextPercent: 90}, render.FinalMeta{Context: a})[0])
	assert.Contains(t, warn, "ctx 90% ⚠️")
	assert.NotContains(t, warn, "The context is")

	chunks := render.RenderFinal(runner.TurnCompleted{OK: true, Answer: longAnswer(), ContextPercent: 96}, render.FinalMeta{Context: a})
	for i, c := range chunks {
		checkMessage(t, c)
		last := i == len(chunks)-1
		assert.Equal(t, last, strings.Contains(c, "The context is 96% full"), "chunk %d", i)
		assert.Equal(t, last, strings.Contains(c, "ctx 96% ⚠️"), "chunk %d", i)
	}
}

func TestStatusShowsEffortWhenSet(t *testing.T) {
	with := render.HTMLToPlain(render.RenderStatus(render.StatusInfo{Model: "claude-opus-5-5", Effort: "xhigh"}))
	assert.Contains(t, with, "Model: claude-opus-5-5\nEffort: xhigh\nMode:")
	without := render.HTMLToPlain(render.RenderStatus(render.StatusInfo{Model: "claude-opus-5-5"}))
	assert.NotContains(t, without, "Effort")
}

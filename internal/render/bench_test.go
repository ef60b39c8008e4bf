package render_test

import (
	"strings"
	"testing"
	"time"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// BenchmarkRenderProgress50Rows is one progress edit of a busy turn: 50
// tool calls applied, then a render showing its rows, notes and text.
func BenchmarkRenderProgress50Rows(b *testing.B) {
	evs := []runner.Event{started(), runner.AssistantText{Text: "Let me look around the repository first."}}
	for _, ev := range toolEvents(50, 10) {
		evs = append(evs, ev)
	}
	evs = append(evs, runner.APIRetry{Attempt: 2, MaxRetries: 10, Status: 529, Error: "overloaded", Delay: time.Second},
		runner.MessageLifecycle{UUID: "u2", State: runner.MessageQueued})
	o := render.ProgressOptions{MaxRows: 8, Now: base.Add(time.Minute), CancelData: "cancel:7f3a"}
	b.ReportAllocs()
	for b.Loop() {
		turn := render.NewTurn(base)
		for _, ev := range evs {
			turn.Apply(ev, base)
		}
		html, _ := render.RenderProgress(turn, o)
		if len(html) == 0 {
			b.Fatal("empty render")
		}
	}
}

// BenchmarkRenderProgressOnly is the render alone, as the bridge repeats
// it on each heartbeat.
func BenchmarkRenderProgressOnly(b *testing.B) {
	turn := render.NewTurn(base)
	for _, ev := range toolEvents(50, 10) {
		turn.Apply(ev, base)
	}
	// A 1,600-character streamed answer, more than the tail shows.
	for _, ev := range streamDeltas(strings.Repeat("word ", 320), 40) {
		turn.Apply(ev, base)
	}
	o := render.ProgressOptions{MaxRows: 8, Now: base.Add(time.Minute), CancelData: "cancel:7f3a"}
	b.ReportAllocs()
	for b.Loop() {
		render.RenderProgress(turn, o)
	}
}

// BenchmarkTurnApply is the cost per event of a steady stream of tool
// calls and text deltas.
func BenchmarkTurnApply(b *testing.B) {
	var evs []runner.Event
	for _, ev := range toolEvents(32, 5) {
		evs = append(evs, ev, runner.TextDelta{Text: "some streamed text "})
	}
	turn := render.NewTurn(base)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		turn.Apply(evs[i%len(evs)], base)
		i++
	}
}

package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

func TestRenderDraft(t *testing.T) {
	long := strings.Repeat("word ", 1500) + "THE-END"
	tests := []struct {
		name     string
		text     string
		cut      bool
		want     string // exact HTML, when short
		contains []string
		prefix   string
	}{
		{name: "nothing yet", text: "", want: ""},
		{name: "whitespace", text: " \n\n ", want: ""},
		{name: "markdown as the answer will be", text: "Hello **there** & `x<y`", want: "Hello <b>there</b> &amp; <code>x&lt;y</code>"},
		{name: "an unfinished fence is still valid", text: "Look:\n\n```go\nfunc f() {", contains: []string{"<pre>", "func f() {"}},
		{name: "too long keeps the end", text: long, prefix: "…\n", contains: []string{"THE-END"}},
		{name: "a tail given is marked", text: "the end of it", cut: true, want: "…\nthe end of it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.RenderDraft(tt.text, tt.cut)
			if tt.want != "" || (tt.contains == nil && tt.prefix == "") {
				assert.Equal(t, tt.want, got)
			}
			if got == "" {
				return
			}
			checkMessage(t, got)
			assert.True(t, strings.HasPrefix(got, tt.prefix), got[:min(len(got), 40)])
			for _, c := range tt.contains {
				assert.Contains(t, got, c)
			}
		})
	}
}

// A table pads its cells, so its HTML shows more than its source: the draft
// still fits one message.
func TestRenderDraftFitsWhenMarkdownGrows(t *testing.T) {
	var b strings.Builder
	b.WriteString("| a | b |\n|---|---|\n")
	for b.Len() < 9000 {
		b.WriteString("| x | a much longer cell that pads the short one |\n")
	}
	got := render.RenderDraft(b.String(), false)
	checkMessage(t, got)
	assert.True(t, strings.HasPrefix(got, "…\n"))
}

func TestStreamedTextBlocks(t *testing.T) {
	turn := render.NewTurn(base)
	text, first, _ := turn.StreamedText()
	assert.Empty(t, text)
	steps := []struct {
		ev       runner.Event
		text     string
		newBlock bool
	}{
		{runner.TextDelta{Text: "Let me "}, "Let me ", false},
		{runner.TextDelta{Text: "look."}, "Let me look.", false},
		{runner.AssistantText{Text: "Let me look."}, "Let me look.", false},
		{runner.ToolStarted{ID: "t1", Name: "Read"}, "Let me look.", false},
		{runner.TextDelta{Text: "Found"}, "Found", true},
		{runner.AssistantText{Text: "Found it."}, "Found it.", false},
		{runner.AssistantText{Text: "Not streamed."}, "Not streamed.", true},
		{runner.AssistantText{Text: "A subagent's.", ParentToolUseID: "t9"}, "Not streamed.", false},
	}
	prev := first
	for i, s := range steps {
		turn.Apply(s.ev, base)
		text, block, _ := turn.StreamedText()
		assert.Equal(t, s.text, text, "step %d", i)
		assert.Equal(t, s.newBlock, block != prev, "step %d: a new block", i)
		prev = block
	}
}

func TestFingerprintWithoutText(t *testing.T) {
	turn := render.NewTurn(base)
	turn.Apply(runner.TextDelta{Text: "first"}, base) // the phase changes: Claude is at work
	fp, all := turn.FingerprintWithoutText(), turn.Fingerprint()
	for _, ev := range []runner.Event{runner.TextDelta{Text: " words"}, runner.AssistantText{Text: "first words"}} {
		turn.Apply(ev, base)
	}
	assert.Equal(t, fp, turn.FingerprintWithoutText(), "streamed text alone changes nothing else")
	assert.NotEqual(t, all, turn.Fingerprint())
	turn.Apply(runner.ToolStarted{ID: "t1", Name: "Read"}, base)
	assert.NotEqual(t, fp, turn.FingerprintWithoutText(), "a tool row does")

	html, _ := render.RenderProgress(turn, render.ProgressOptions{Now: base, HideText: true})
	checkMessage(t, html)
	assert.NotContains(t, html, "<blockquote>", "the text is in the draft")
	assert.Contains(t, html, "Read")
	html, _ = render.RenderProgress(turn, render.ProgressOptions{Now: base})
	require.Contains(t, html, "<blockquote>first words</blockquote>")
}

package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

func threeQuestions() []runner.Question {
	return []runner.Question{
		{Question: "Which colour should the button be?", Header: "Colour",
			Options: []runner.QuestionOption{{Label: "Red", Description: "A red button"}, {Label: "Blue", Description: "A blue button"}}},
		{Question: "Which toppings do you want?", Header: "Toppings", MultiSelect: true,
			Options: []runner.QuestionOption{{Label: "Cheese"}, {Label: "Ham", Description: "Smoked <ham> & more"}, {Label: "Olives"}}},
		{Question: "Anything else?", Header: "Notes"},
	}
}

// questionButtons is the callback data the bridge gives the current question.
func questionButtons(req runner.ApprovalRequested, st render.QuestionState) render.ApprovalButtons {
	b := render.ApprovalButtons{Deny: "d:k3Xq9Z", Done: fmt.Sprintf("D:k3Xq9Z:%d", st.Current)}
	if st.Current < len(req.Questions) {
		for i := range req.Questions[st.Current].Options {
			b.Options = append(b.Options, fmt.Sprintf("o:k3Xq9Z:%d", i))
		}
	}
	return b
}

func TestQuestionGolden(t *testing.T) {
	qs := threeQuestions()
	req := runner.ApprovalRequested{RequestID: "r", Tool: "AskUserQuestion", Interactive: true,
		Input: rawJSON(t, map[string]any{"questions": qs}), Questions: qs}
	multi := runner.ApprovalRequested{RequestID: "r", Tool: "AskUserQuestion", Interactive: true, Questions: qs[1:2]}
	tests := []struct {
		name string
		req  runner.ApprovalRequested
		st   render.QuestionState
	}{
		{"three-first", req, render.QuestionState{}},
		{"three-second-ticked", req, render.QuestionState{Current: 1, Ticked: []bool{true, false, true}, Answers: []string{"Blue"}}},
		{"three-third-free-text", req, render.QuestionState{Current: 2, Answers: []string{"Blue", "Cheese, Olives"}}},
		{"multi-select-nothing-ticked", multi, render.QuestionState{}},
		{"multi-select-ticked", multi, render.QuestionState{Ticked: []bool{false, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			html, kb := render.RenderQuestion(tc.req, tc.st, questionButtons(tc.req, tc.st))
			checkMessage(t, html)
			checkKeyboard(t, kb)
			checkRenderGolden(t, "question", tc.name,
				fmt.Sprintf("── %d visible ──\n%s\n%s", render.VisibleLen(html), html, formatKeyboard(kb)))
		})
	}
	t.Run("decided", func(t *testing.T) {
		outcome := render.Answered(render.QuestionAnswers(req, []string{"Blue", "Cheese, Olives", "Make it round"}))
		html := render.RenderApprovalDecided(req, outcome, "@alice", base)
		checkMessage(t, html)
		assert.NotContains(t, html, "reply to this message", "a decided question asks nothing")
		checkRenderGolden(t, "question", "decided", html+"\n")
	})
}

func TestQuestionKeyboards(t *testing.T) {
	qs := threeQuestions()
	req := runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: qs}
	tests := []struct {
		name string
		st   render.QuestionState
		want []string // button texts, top to bottom
	}{
		{"single select: one button per option", render.QuestionState{}, []string{"Red", "Blue", "✖ Skip questions"}},
		{"multi select: toggles, no Done until ticked", render.QuestionState{Current: 1},
			[]string{"☐ Cheese", "☐ Ham", "☐ Olives", "✖ Skip questions"}},
		{"multi select: ticks and Done", render.QuestionState{Current: 1, Ticked: []bool{false, true, true}},
			[]string{"☐ Cheese", "☑ Ham", "☑ Olives", "✅ Done", "✖ Skip questions"}},
		{"no options: only Skip", render.QuestionState{Current: 2}, []string{"✖ Skip questions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, kb := render.RenderQuestion(req, tt.st, questionButtons(req, tt.st))
			checkKeyboard(t, kb)
			var got []string
			for _, row := range kb.Rows {
				for _, b := range row {
					got = append(got, b.Text)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
	_, kb := render.RenderQuestion(runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: qs[:1]}, render.QuestionState{},
		render.ApprovalButtons{Deny: "d"})
	assert.Equal(t, [][]render.Button{{{Text: "✖ Skip question", CallbackData: "d"}}}, kb.Rows, "options without data are left out")
}

func TestQuestionHintSaysOnlyWhatWorks(t *testing.T) {
	qs := threeQuestions()
	req := runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: qs}
	for cur, want := range []string{
		"Question 1 of 3: Press an answer, or reply to this message with your own.",
		"Question 2 of 3: Tick every answer that applies, then press ✅ Done. Or reply to this message to add an answer of your own.",
		"Question 3 of 3: Reply to this message with your answer.",
	} {
		html, _ := render.RenderQuestion(req, render.QuestionState{Current: cur}, questionButtons(req, render.QuestionState{Current: cur}))
		assert.True(t, strings.HasSuffix(render.HTMLToPlain(html), want), "%s", html)
		assert.NotContains(t, html, "reply with text to choose more than one", "the old promise is gone")
	}
}

func TestQuestionAnswers(t *testing.T) {
	qs := threeQuestions()
	req := runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: qs}
	assert.Equal(t, "Blue", render.QuestionAnswers(runner.ApprovalRequested{Questions: qs[:1]}, []string{"Blue"}))
	assert.Equal(t, "Colour: Blue · Toppings: Ham · Notes: round", render.QuestionAnswers(req, []string{"Blue", "Ham", "round"}))
	assert.Equal(t, "Q1: a · Q2: b", render.QuestionAnswers(runner.ApprovalRequested{Questions: []runner.Question{{}, {}}}, []string{"a", "b"}))
}

func TestQuestionLongContentFits(t *testing.T) {
	var qs []runner.Question
	for i := range 4 {
		q := runner.Question{Question: strings.Repeat("Why <so> long? ", 300), Header: strings.Repeat("H", 200), MultiSelect: i%2 == 1}
		for j := range 4 {
			q.Options = append(q.Options, runner.QuestionOption{Label: strings.Repeat(fmt.Sprint(j), 100), Description: strings.Repeat("d & ", 100)})
		}
		qs = append(qs, q)
	}
	req := runner.ApprovalRequested{Tool: "AskUserQuestion", Questions: qs}
	for cur := range qs {
		st := render.QuestionState{Current: cur, Ticked: []bool{true}, Answers: []string{strings.Repeat("answer ", 200), "b", "c"}}
		html, kb := render.RenderQuestion(req, st, questionButtons(req, st))
		checkMessage(t, html)
		checkKeyboard(t, kb)
		assert.Contains(t, render.HTMLToPlain(html), fmt.Sprintf("Question %d of 4", cur+1), "the hint always fits")
	}
}

package render

import (
	"fmt"
	"strings"

	"github.com/untether/untether/internal/runner"
)

// QuestionState is where an AskUserQuestion prompt stands. The questions
// are asked one after another in the same message: the earlier ones show
// their answers, the current one has the buttons, the later ones wait. One
// question at a time keeps every option on a full-width button and gives a
// reply to the message exactly one question to answer.
type QuestionState struct {
	// Current is the index of the question being asked.
	Current int
	// Ticked marks the current question's ticked options (multi-select).
	Ticked []bool
	// Answers holds the answers to the questions before Current.
	Answers []string
}

// Layout limits of question prompts, in UTF-16 units.
const (
	questionHeaderMax = 80
	optionDescMax     = 150
	answerMax         = 200
)

// RenderQuestion renders an AskUserQuestion request at state st: every
// question with its options, the answers given so far, a line saying how to
// answer the current question, and its buttons. b.Options is the callback
// data of the current question's options (toggles when it is multi-select),
// b.Done finishes a multi-select question and b.Deny skips the questions.
func RenderQuestion(req runner.ApprovalRequested, st QuestionState, b ApprovalButtons) (string, Keyboard) {
	return string(promptBody(req, &st, SafeChunkLimit).b), questionKeyboard(req, st, b)
}

// QuestionAnswers is the outcome note of answered questions: the answer
// alone for one question, "Header: answer · …" for several.
func QuestionAnswers(req runner.ApprovalRequested, answers []string) string {
	if len(answers) == 1 {
		return answers[0]
	}
	parts := make([]string, 0, len(answers))
	for i, a := range answers {
		name := fmt.Sprintf("Q%d", i+1)
		if i < len(req.Questions) && oneLine(req.Questions[i].Header) != "" {
			name = oneLine(req.Questions[i].Header)
		}
		parts = append(parts, name+": "+a)
	}
	return strings.Join(parts, " · ")
}

func questionTitle(req runner.ApprovalRequested) string {
	if n := len(req.Questions); n > 1 {
		return fmt.Sprintf("Claude has %d questions", n)
	}
	return "Claude has a question"
}

// questionHint says how the current question can be answered, and only
// what works: buttons, Done for a multi-select, a reply to the message.
func questionHint(req runner.ApprovalRequested, st *QuestionState) string {
	if st.Current >= len(req.Questions) {
		return ""
	}
	q := req.Questions[st.Current]
	var hint string
	switch {
	case len(q.Options) == 0:
		hint = "Reply to this message with your answer."
	case q.MultiSelect:
		hint = "Tick every answer that applies, then press ✅ Done. Or reply to this message to add an answer of your own."
	default:
		hint = "Press an answer, or reply to this message with your own."
	}
	if n := len(req.Questions); n > 1 {
		hint = fmt.Sprintf("Question %d of %d: %s", st.Current+1, n, hint)
	}
	return hint
}

// questionContent writes the questions within room units. st is nil for a
// decided request, which shows the questions without a hint.
func questionContent(w *htmlText, req runner.ApprovalRequested, st *QuestionState, room int) {
	if len(req.Questions) == 0 {
		jsonContent(w, req, room)
		return
	}
	var hint htmlText
	if st != nil {
		if h := questionHint(req, st); h != "" {
			hint.raw("<i>")
			hint.text(h)
			hint.raw("</i>")
		}
		room -= sectionLen(hint.n, 2)
	}
	// Each question gets an equal share, so a long first question cannot
	// push the others out.
	share := room / len(req.Questions)
	for i, q := range req.Questions {
		var s htmlText
		if i > 0 {
			s.raw("\n\n")
			s.n += 2
		}
		if q.Header != "" {
			s.raw("<b>")
			s.text(Truncate(oneLine(q.Header), questionHeaderMax))
			s.raw("</b>\n")
			s.n++
		}
		s.text(Truncate(strings.TrimSpace(q.Question), max(share/2, 1)))
		if st != nil && i < st.Current && i < len(st.Answers) {
			s.text("\n→ ")
			s.raw("<b>")
			s.text(Truncate(oneLine(st.Answers[i]), answerMax))
			s.raw("</b>")
		} else {
			questionOptions(&s, q, share)
		}
		if w.n+s.n > room {
			break
		}
		w.b = append(w.b, s.b...)
		w.n += s.n
	}
	w.section(hint)
}

// section appends s after a blank line; an empty s adds nothing.
func (w *htmlText) section(s htmlText) {
	if s.n == 0 {
		return
	}
	w.raw("\n\n")
	w.n += 2
	w.b = append(w.b, s.b...)
	w.n += s.n
}

// questionOptions lists a question's options, as many as fit in share.
func questionOptions(s *htmlText, q runner.Question, share int) {
	for _, opt := range q.Options {
		var line htmlText
		line.text("\n• ")
		line.raw("<b>")
		line.text(Truncate(oneLine(opt.Label), optionLabelMax))
		line.raw("</b>")
		if d := oneLine(opt.Description); d != "" {
			line.text(" — " + Truncate(d, optionDescMax))
		}
		if s.n+line.n > share {
			break
		}
		s.b = append(s.b, line.b...)
		s.n += line.n
	}
}

// questionKeyboard is one button per option of the current question (☐/☑
// toggles for a multi-select one), Done once something is ticked, and Skip.
func questionKeyboard(req runner.ApprovalRequested, st QuestionState, b ApprovalButtons) Keyboard {
	var kb Keyboard
	add := func(text, data string) {
		if data != "" {
			kb.Rows = append(kb.Rows, []Button{{Text: text, CallbackData: data}})
		}
	}
	if st.Current < len(req.Questions) {
		q := req.Questions[st.Current]
		ticked := false
		for i, opt := range q.Options {
			if i >= len(b.Options) {
				break
			}
			label := oneLine(opt.Label)
			if label == "" {
				label = fmt.Sprintf("Option %d", i+1)
			}
			if q.MultiSelect {
				mark := "☐ "
				if i < len(st.Ticked) && st.Ticked[i] {
					mark, ticked = "☑ ", true
				}
				label = mark + label
			}
			add(Truncate(label, optionLabelMax), b.Options[i])
		}
		if q.MultiSelect && ticked {
			add("✅ Done", b.Done)
		}
	}
	skip := "✖ Skip question"
	if len(req.Questions) > 1 {
		skip = "✖ Skip questions"
	}
	add(skip, b.Deny)
	return kb
}

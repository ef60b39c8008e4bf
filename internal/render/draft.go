package render

import (
	"strings"

	"github.com/untether/untether/internal/runner"
)

// StreamedText is the answer text of the current text block as streamed so
// far (its tail, at most a few thousand characters; cut says that earlier
// text was dropped), and the block's number: it changes when a new block
// begins, e.g. after a tool call, and never goes back.
func (t *Turn) StreamedText() (text string, block uint64, cut bool) {
	return t.text.String(), t.textBlock, t.text.cut
}

// FingerprintWithoutText is [Turn.Fingerprint] blind to changes of the
// streamed text alone, for a progress message rendered with
// [ProgressOptions.HideText]: a streamed word then costs no edit.
func (t *Turn) FingerprintWithoutText() uint64 { return t.restRev }

// onlyText reports whether ev can change nothing but the streamed text
// (and the phase, which Apply checks separately).
func onlyText(ev runner.Event) bool {
	switch e := ev.(type) {
	case runner.TextDelta:
		return true
	case runner.AssistantText:
		return e.ParentToolUseID == ""
	}
	return false
}

// draftLimit is how much of the answer a draft shows, in visible UTF-16
// units: what one message may hold, with the margin the final answer keeps.
const draftLimit = SafeChunkLimit

// RenderDraft renders the answer streamed so far as a Telegram draft: the
// Markdown converted as the final answer will be, so the draft turns into
// the answer without its formatting jumping. Text longer than one message
// keeps its end, after an ellipsis, because a draft shows what is being
// written now; cut says the text given is itself a tail. The result is
// valid Telegram HTML of at most [SafeChunkLimit] visible units, and empty
// when there is nothing to show yet (Telegram refuses an empty draft).
func RenderDraft(text string, cut bool) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	src := text
	limit := draftLimit
	if cut || UTF16Len(src) > limit {
		cut = true
		limit = draftLimit - 2 // the ellipsis and its line break
		src = tailFrom(src, limit)
	}
	for {
		html := MarkdownToHTML(src)
		// Markdown rarely grows visibly (table padding does); shrink
		// until it fits rather than trusting the source length.
		n := VisibleLen(html)
		if n <= limit || src == "" {
			if strings.TrimSpace(html) == "" {
				return ""
			}
			if cut {
				return ellipsis + "\n" + html
			}
			return html
		}
		cut = true
		limit = draftLimit - 2
		src = tailFrom(src, UTF16Len(src)-(n-limit)-1)
	}
}

// tailFrom returns the end of s of at most maxUTF16 units, starting at a
// line if one begins in the last fifth of the budget, so the draft does not
// open mid-paragraph or mid-code-fence more than it has to.
func tailFrom(s string, maxUTF16 int) string {
	if maxUTF16 <= 0 {
		return ""
	}
	t := truncateFront(s, maxUTF16+1, true) // +1: the ellipsis truncateFront adds
	t = strings.TrimPrefix(t, ellipsis)
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/5 {
		t = t[i+1:]
	}
	return t
}

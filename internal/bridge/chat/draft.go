package chat

import (
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A turn's answer streams as the model writes it. In a private chat it is
// a Telegram draft (sendMessageDraft): the chat shows the reply being
// typed, each text block as its own draft, and while a block is drafted the
// progress message keeps only the tool rows, so a streamed word costs
// neither an edit nor any of the chat's message budget. A block followed
// by a tool call returns to the progress message once it is complete. Groups and forum topics have no drafts
// (Telegram refuses them), nor does a private chat whose Telegram refused
// one; there the streamed text is the tail of the progress message, and the
// first edit carrying a block's text goes out at once, not on the next
// progress tick (at least 3 s apart in groups).

// draftStream is the draft of the text block being written, if any.
type draftStream struct {
	d      *outbox.Draft
	block  uint64 // the render.Turn text block d shows
	edited uint64 // the last text block an immediate progress edit showed, plus one
}

// live reports whether a draft is being written: a typing indicator would
// replace it on the user's screen.
func (s *draftStream) live() bool { return s.d != nil && s.d.Shown() }

func (s *draftStream) end() {
	if s.d != nil {
		s.d.End()
		s.d = nil
	}
}

// draftsApply reports whether the chat's answers stream as drafts.
func (c *Chat) draftsApply() bool {
	return !c.group && c.b.Config().Progress.Drafts && c.b.out.DraftsRefused(c.outKey.Chat) == nil
}

// drafting reports whether the text block being written is shown as a
// draft, and so left out of the progress message. Once the block is over
// (a tool call follows), the progress message shows it again, so what
// Claude said before its tool calls stays readable while they run.
func (c *Chat) drafting(t *turn) bool { return t.draft.d != nil && c.draftsApply() }

// progressFingerprint is what decides whether the progress message needs an
// edit: with drafts, streamed text alone does not.
func (c *Chat) progressFingerprint(t *turn) uint64 {
	if c.draftsApply() {
		return t.view.FingerprintWithoutText()
	}
	return t.view.Fingerprint()
}

// streamText shows the answer text an event brought (after the turn's view
// applied it), and ends the draft of a text block that is over.
func (c *Chat) streamText(t *turn, ev runner.Event, now time.Time) {
	switch e := ev.(type) {
	case runner.TextDelta:
	case runner.AssistantText:
		if e.ParentToolUseID != "" {
			return // a subagent's text is not the answer
		}
	case runner.ToolStarted:
		t.draft.end() // the text before a tool call is complete
		return
	default:
		return
	}
	text, block, _ := t.view.StreamedText()
	if strings.TrimSpace(text) == "" {
		return
	}
	s := &t.draft
	if !c.draftsApply() {
		s.end()
		if t.progress != nil && s.edited != block+1 {
			s.edited = block + 1
			c.renderProgress(t, now)
		}
		return
	}
	if s.d == nil || s.block != block {
		s.end()
		s.d = c.b.out.Draft(c.ctx(), c.outKey, renderDraft)
		s.block = block
	}
	s.d.Show(text)
}

// renderDraft formats a draft when it is sent (off the actor, so it must
// only read its argument).
func renderDraft(text string) string { return render.RenderDraft(text, false) }

// endDraft ends the turn's draft before the answer is queued: no draft
// call starts after it, so the draft cannot reappear below the answer.
func (c *Chat) endDraft(t *turn) {
	if t != nil {
		t.draft.end()
	}
}

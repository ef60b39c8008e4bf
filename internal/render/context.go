package render

import (
	"github.com/untether/untether/internal/runner"
)

// ContextLevel is how full an answer left the context, against the
// operator's thresholds.
type ContextLevel uint8

// The context levels, from empty to full.
const (
	// ContextOK: below the warning; the footer shows the plain share.
	ContextOK ContextLevel = iota
	// ContextWarn: at or above WarnAt; the footer warns and the answer
	// offers a 🗜 Compact button (unless compaction is off).
	ContextWarn
	// ContextFull: at or above FullAt; a note also says what happens
	// when the context runs out.
	ContextFull
)

// Compaction is what the CLI does about a context that fills up, as the
// bridge learnt it (runner.ContextUsage, runner.CompactDisabled).
type Compaction uint8

// The compaction states.
const (
	// CompactionUnknown: not asked, or no answer.
	CompactionUnknown Compaction = iota
	// CompactionAuto: the CLI compacts by itself at ContextAlert.AutoAt,
	// and when the API refuses a prompt as too long.
	CompactionAuto
	// CompactionManual: automatic compaction is off (DISABLE_AUTO_COMPACT
	// or the CLI's settings); /compact still works.
	CompactionManual
	// CompactionOff: DISABLE_COMPACT; /compact does not work either.
	CompactionOff
)

// ContextAlert is what an answer says about a context that fills up.
// Shares are percentages (0–100), like TurnCompleted.ContextPercent; the
// config's shares of 1 are multiplied by 100.
type ContextAlert struct {
	// WarnAt and FullAt are render.context_warn_at and context_full_at;
	// WarnAt 0 never warns.
	WarnAt, FullAt float64
	Compaction     Compaction
	// AutoAt is where the CLI compacts by itself, with CompactionAuto
	// (runner.ContextUsage.AutoCompactPercent).
	AutoAt float64
}

// Level is the level of a context percent full.
func (a ContextAlert) Level(percent float64) ContextLevel {
	switch {
	case a.WarnAt <= 0 || !(percent >= a.WarnAt):
		return ContextOK
	case a.FullAt > 0 && percent >= a.FullAt:
		return ContextFull
	}
	return ContextWarn
}

// ContextLevel is the level of the context the turn left, the footer's
// share (meta.ContextPercent, else the result's) against meta.Context.
func (m FinalMeta) ContextLevel(tc runner.TurnCompleted) ContextLevel {
	return m.Context.Level(m.contextPercent(tc))
}

// OffersCompact reports whether the answer should carry CompactKeyboard:
// the context is at or above the warning, and /compact works.
func (m FinalMeta) OffersCompact(tc runner.TurnCompleted) bool {
	return m.ContextLevel(tc) >= ContextWarn && m.Context.Compaction != CompactionOff
}

// contextPercent is the footer's share: meta's, else the result's.
func (m FinalMeta) contextPercent(tc runner.TurnCompleted) float64 {
	if m.ContextPercent > 0 {
		return m.ContextPercent
	}
	return tc.ContextPercent
}

// CompactButtonText is the label of the button CompactKeyboard makes.
const CompactButtonText = "🗜 Compact"

// CompactKeyboard is the 🗜 Compact button for an answer's last chunk;
// data is its callback data (at most MaxCallbackDataBytes), which the
// caller maps to sending /compact to the session.
func CompactKeyboard(data string) Keyboard {
	return Keyboard{Rows: [][]Button{{{Text: CompactButtonText, CallbackData: data}}}}
}

// contextNote is the note above the footer of an answer at ContextFull:
// what happens when the context runs out. What the CLI does was measured
// (runner's doc): with automatic compaction it compacts before a request
// once it is about AutoAt full, and when the API refuses a prompt as too
// long; without it such a turn fails with "Prompt is too long".
func contextNote(a ContextAlert, percent float64) string {
	head := "⚠️ The context is " + formatContext(percent) + " full. "
	switch a.Compaction {
	case CompactionAuto:
		switch at := formatContext(a.AutoAt); {
		case at != "" && percent >= a.AutoAt:
			return head + "Claude Code is about to compact it by itself (it does at about " + at + "), keeping a summary."
		case at != "":
			return head + "Claude Code compacts it by itself at about " + at + ", or when a message no longer fits, keeping a summary."
		}
		return head + "Claude Code compacts it by itself when it is nearly full, keeping a summary."
	case CompactionManual:
		return head + "Automatic compaction is off: once a message no longer fits, the turn fails. Compact now, or start over with /new."
	case CompactionOff:
		return head + "Compaction is off here: once a message no longer fits, the turn fails. Start over with /new."
	}
	return head + "When a message no longer fits, Claude Code compacts it by itself, or the turn fails if compaction is off."
}

package render

import (
	"strings"

	east "github.com/yuin/goldmark/extension/ast"
)

// table renders a GFM table as aligned monospace text: Telegram has no
// table markup, and a pre block is the only place columns line up.
func (r *renderer) table(t *east.Table) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.Join(strings.Fields(r.plainText(cell)), " "))
		}
		rows = append(rows, cells)
	}
	cols := len(t.Alignments)
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for ri, row := range rows {
		if ri > 0 {
			b.WriteByte('\n')
		}
		var line strings.Builder
		for i := 0; i < cols; i++ {
			if i > 0 {
				line.WriteString(" | ")
			}
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			align := east.AlignNone
			if i < len(t.Alignments) {
				align = t.Alignments[i]
			}
			line.WriteString(pad(cell, widths[i], align))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		if ri == 0 {
			b.WriteByte('\n')
			for i, w := range widths {
				if i > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", max(w, 1)))
			}
		}
	}
	r.w.breakBefore(blockGap(t))
	r.w.pre("", []byte(b.String()))
}

func pad(s string, width int, align east.Alignment) string {
	gap := width - displayWidth(s)
	if gap <= 0 {
		return s
	}
	switch align {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		left := gap / 2
		return strings.Repeat(" ", left) + s + strings.Repeat(" ", gap-left)
	default:
		return s + strings.Repeat(" ", gap)
	}
}

// displayWidth approximates how many monospace cells s occupies: East Asian
// wide characters and emoji take two, combining marks and joiners none.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case isGraphemeExtender(r):
		case isWide(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

func isWide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115F, // Hangul Jamo
		r >= 0x2E80 && r <= 0x303E, // CJK radicals, punctuation
		r >= 0x3041 && r <= 0x33FF, // kana, CJK symbols
		r >= 0x3400 && r <= 0x4DBF, // CJK extension A
		r >= 0x4E00 && r <= 0x9FFF, // CJK unified ideographs
		r >= 0xA000 && r <= 0xA4CF, // Yi
		r >= 0xAC00 && r <= 0xD7A3, // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF, // CJK compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F, // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60, // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F, // pictographs, emoticons
		r >= 0x1F680 && r <= 0x1F6FF, // transport
		r >= 0x1F900 && r <= 0x1F9FF, // supplemental symbols
		r >= 0x20000 && r <= 0x3FFFD: // CJK extensions B+
		return true
	}
	return false
}

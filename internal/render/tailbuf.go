package render

import "unicode/utf8"

// tailBuf keeps the last bytes of a growing text, amortising the trimming
// so that appending a stream of small deltas stays O(1) per delta.
type tailBuf struct {
	b   []byte
	cut bool // earlier text was dropped
}

func (tb *tailBuf) set(s string, limit int) {
	tb.cut = len(s) > limit
	if tb.cut {
		s = s[len(s)-limit:]
	}
	tb.b = append(tb.b[:0], s...)
}

func (tb *tailBuf) add(s string, limit int) {
	tb.b = append(tb.b, s...)
	if len(tb.b) > 2*limit {
		n := copy(tb.b, tb.b[len(tb.b)-limit:])
		tb.b = tb.b[:n]
		tb.cut = true
	}
}

func (tb *tailBuf) reset() {
	tb.b = tb.b[:0]
	tb.cut = false
}

// String returns the retained text, starting at a rune boundary.
func (tb *tailBuf) String() string {
	b := tb.b
	for i := 0; i < len(b) && i < utf8.UTFMax && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return string(b)
}

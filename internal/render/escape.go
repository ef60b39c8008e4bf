package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// htmlEscaper escapes exactly the four characters Telegram's HTML parser
// treats specially. Telegram knows only the named entities &lt; &gt; &amp;
// and &quot;, so anything fancier (html.EscapeString's &#39;) is avoided to
// keep the output readable in logs and golden files.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// EscapeHTML escapes &, <, > and " so that s can be embedded as text or as
// an attribute value in a Telegram HTML message. Nothing else is touched.
func EscapeHTML(s string) string {
	return htmlEscaper.Replace(s)
}

// appendEscaped is the allocation-free form of [EscapeHTML] used on the
// renderer's hot path.
func appendEscaped(dst, src []byte) []byte {
	last := 0
	for i, c := range src {
		var rep string
		switch c {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&quot;"
		default:
			continue
		}
		dst = append(dst, src[last:i]...)
		dst = append(dst, rep...)
		last = i + 1
	}
	return append(dst, src[last:]...)
}

// UTF16Len returns the length of s in UTF-16 code units, the unit Telegram
// uses for message limits and entity offsets. Runes outside the Basic
// Multilingual Plane (most emoji) count as two; each invalid UTF-8 byte
// counts as one, as it would after replacement with U+FFFD.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUnits(r)
		i += size
	}
	return n
}

// runeUnits is the UTF-16 length of a single rune.
func runeUnits(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// VisibleLen returns the UTF-16 length of the text Telegram would display
// for html: tags are not counted and entities count as the characters they
// decode to. This is the quantity Telegram's 4096 limit applies to.
func VisibleLen(html string) int {
	n := 0
	for i := 0; i < len(html); {
		if c := html[i]; c < utf8.RuneSelf && c != '<' && c != '&' {
			n++
			i++
			continue
		}
		a := nextAtom(html, i)
		if a.kind == atomText {
			n += a.units
		}
		i = a.end
	}
	return n
}

// HTMLToPlain strips tags from Telegram HTML and decodes entities. It is the
// plain-text fallback sent without parse_mode when Telegram rejects the
// markup, so the user still gets every character of the answer.
func HTMLToPlain(html string) string {
	var b strings.Builder
	b.Grow(len(html))
	for i := 0; i < len(html); {
		a := nextAtom(html, i)
		if a.kind == atomText {
			b.WriteString(a.text(html))
		}
		i = a.end
	}
	return b.String()
}

// ellipsis is appended by Truncate; it is one UTF-16 unit.
const ellipsis = "…"

// Truncate shortens plain text s to at most maxUTF16 UTF-16 units for
// previews, cutting on a rune boundary and appending "…" when it cuts.
// Trailing whitespace and dangling joiners before the ellipsis are dropped so
// the preview does not end in half an emoji sequence.
func Truncate(s string, maxUTF16 int) string {
	if maxUTF16 <= 0 {
		return ""
	}
	if UTF16Len(s) <= maxUTF16 {
		return s
	}
	budget := maxUTF16 - 1 // room for the ellipsis
	cut, used := 0, 0
	for cut < len(s) {
		r, size := utf8.DecodeRuneInString(s[cut:])
		u := runeUnits(r)
		if used+u > budget {
			break
		}
		used += u
		cut += size
	}
	head := strings.TrimRightFunc(s[:cut], func(r rune) bool {
		return unicode.IsSpace(r) || r == zeroWidthJoiner || isVariationSelector(r)
	})
	return head + ellipsis
}

const zeroWidthJoiner = '\u200d'

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// Bold is s, escaped, in bold: what the bridge and its modules use instead
// of writing tags around text that is not theirs.
func Bold(s string) string { return "<b>" + EscapeHTML(s) + "</b>" }

// Italic is s, escaped, in italics.
func Italic(s string) string { return "<i>" + EscapeHTML(s) + "</i>" }

// Code is s, escaped, as inline code (a long press copies it).
func Code(s string) string { return "<code>" + EscapeHTML(s) + "</code>" }

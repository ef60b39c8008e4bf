package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// htmlText accumulates Telegram HTML and counts its visible UTF-16 units as
// it goes, so budgets are exact without re-scanning the markup.
type htmlText struct {
	b []byte
	n int
}

// raw appends markup (or pre-escaped text whose units the caller counts).
func (w *htmlText) raw(s string) { w.b = append(w.b, s...) }

// text appends s as escaped text. Invalid UTF-8 becomes U+FFFD, because
// Telegram refuses the whole message otherwise, and control characters
// other than newline and tab are dropped (ANSI colour codes in tool output).
func (w *htmlText) text(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '&':
				w.b = append(w.b, "&amp;"...)
			case c == '<':
				w.b = append(w.b, "&lt;"...)
			case c == '>':
				w.b = append(w.b, "&gt;"...)
			case c == '"':
				w.b = append(w.b, "&quot;"...)
			case c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f):
				w.b = append(w.b, c)
			case c == 0x1b && i < len(s) && s[i] == '[':
				// An ANSI escape sequence (colours in tool output): skip
				// it through its final byte.
				for i++; i < len(s) && (s[i] < 0x40 || s[i] > 0x7e); i++ {
				}
				i++
				continue
			default:
				continue
			}
			w.n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.b = append(w.b, "\uFFFD"...)
		} else {
			w.b = append(w.b, s[i:i+size]...)
		}
		w.n += runeUnits(r)
		i += size
	}
}

// oneLine collapses runs of whitespace, newlines included, to one space.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t\v\f") && !strings.Contains(s, "  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// truncateFront keeps the end of s within maxUTF16 units, starting with "…"
// when it cuts or when cut says text before s was already dropped.
func truncateFront(s string, maxUTF16 int, cut bool) string {
	if maxUTF16 <= 0 {
		return ""
	}
	if !cut && UTF16Len(s) <= maxUTF16 {
		return s
	}
	budget := maxUTF16 - 1 // room for the ellipsis
	i, used := len(s), 0
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		u := runeUnits(r)
		if used+u > budget {
			break
		}
		used += u
		i -= size
	}
	return ellipsis + strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

package transcript

import (
	"strings"
	"unicode/utf8"
)

// clip collapses runs of white space (newlines too) to one space and cuts
// s to at most n runes, the last of them "…" when it was cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

package handoff

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A resume line is read by shells untether does not choose: the person's
// own (bash, zsh, dash, fish), the target account's sh under sudo, and for
// a project on another host that host's login shell too (the runner allows
// any, remote.go). So each word is written in the one form those shells
// all read as the same bytes:
//
//   - A word of only letters, digits and _ . / : @ + , - (and = after its
//     first character) is left bare: none of those means anything to any
//     of them there (zsh expands a leading =).
//   - Anything else is single-quoted, except ' and \, which are written
//     outside the quotes as \' and \\. POSIX shells take everything inside
//     '…' literally and \c outside as c; fish also reads \' and \\ inside
//     single quotes as escapes, which this form never puts there. So
//     "it's" is 'it'\''s' (the classic form) and `a\b` is 'a'\\'b'.
//
// A command handed as one word to another shell (ssh's remote command,
// sudo's sh -c) is double-quoted when it holds none of $ ` \ " ! and no
// newline (inside "…" all shells then read it literally; ! would be
// history expansion in an interactive bash or zsh), else quoted as a word
// like any other.

// isBare reports whether s can be written without quotes.
func isBare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_./:@+,-", c) >= 0, c == '=' && i > 0:
		default:
			return false
		}
	}
	return true
}

// word is s as one shell word; bare when it can be.
func word(s string) string {
	if isBare(s) {
		return s
	}
	return quoted(s)
}

// quoted is s single-quoted, ' and \ written outside the quotes; the empty
// string is a pair of single quotes.
func quoted(s string) string {
	if s == "" {
		return "''"
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	open := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' || c == '\\' {
			if open {
				b.WriteByte('\'')
				open = false
			}
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		if !open {
			b.WriteByte('\'')
			open = true
		}
		b.WriteByte(c)
	}
	if open {
		b.WriteByte('\'')
	}
	return b.String()
}

// command is cmd as one word for a shell that hands it to another: in
// double quotes when nothing in it is special there, else quoted.
func command(cmd string) string {
	if cmd != "" && !strings.ContainsAny(cmd, "$`\\\"!\n") {
		return `"` + cmd + `"`
	}
	return quoted(cmd)
}

// homeRelative is a directory on another host that starts with ~/ (the
// login's home), as a word: ~ must stay outside the quotes to be expanded,
// so "~/src/my model" is ~/'src/my model'.
func homeRelative(dir string) string {
	rest := strings.TrimPrefix(dir, "~/")
	if rest == "" {
		return "~"
	}
	return "~/" + quoted(rest)
}

// checkShowable refuses text that a line shown in Telegram could not carry
// as it is: bytes that are not UTF-8 (a message would hold U+FFFD instead,
// and the line would name another directory), control characters other
// than tab and newline (invisible, or mangled on the way) and the
// bidirectional controls, which would show the line in another order than
// the one it runs in. what names it.
func checkShowable(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s %.120q is not UTF-8", ErrUnshowable, what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("%w: %s %.120q holds the control character %U", ErrUnshowable, what, s, r)
		}
	}
	return nil
}

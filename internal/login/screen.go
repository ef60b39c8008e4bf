package login

import (
	"net/url"
	"regexp"
	"strings"
)

// screen turns what a login program writes to its terminal into text: the
// escape sequences are dropped (the hyperlinks' targets kept aside), and
// cursor movements become spaces or line breaks, so that words an Ink
// interface places with "move to column N" (claude setup-token does,
// verified) stay apart. It is fed the raw bytes in any pieces and keeps an
// escape sequence split between two pieces until it is whole.
type screen struct {
	pending []byte   // an unfinished escape sequence from the last piece
	text    []byte   // the visible text so far (its last maxText bytes)
	links   []string // targets of OSC 8 hyperlinks, in order (the first few)
	// mark is where in text the output after the code starts (see since).
	mark int
}

const (
	esc = 0x1b
	bel = 0x07
)

// Bounds on what a screen keeps of a program that writes without end: an
// escape sequence that never ends is dropped as garbage, and only the
// latest text and the first links are kept.
const (
	maxPending = 64 << 10
	maxText    = 256 << 10
	maxLinks   = 16
)

// write adds one piece of output.
func (s *screen) write(p []byte) {
	buf := append(s.pending, p...)
	s.pending = nil
	for i := 0; i < len(buf); {
		c := buf[i]
		switch {
		case c == esc:
			n, complete := s.escape(buf[i:])
			if !complete {
				if len(buf)-i <= maxPending {
					s.pending = append([]byte(nil), buf[i:]...)
				}
				return
			}
			i += n
			continue
		case c == '\r' || c == '\n':
			s.text = append(s.text, '\n')
		case c == '\t':
			s.text = append(s.text, ' ')
		case c < 0x20 || c == 0x7f:
			// other C0 controls (BEL, SI, backspace…) show nothing
		default:
			s.text = append(s.text, c)
		}
		i++
	}
	if over := len(s.text) - maxText; over > 0 {
		s.text = append(s.text[:0], s.text[over:]...)
		s.mark = max(0, s.mark-over)
	}
}

// setMark makes since start at the text written from now on.
func (s *screen) setMark() { s.mark = len(s.text) }

// since is the visible lines written after setMark.
func (s *screen) since() []string { return textLines(s.text[s.mark:]) }

// escape consumes the escape sequence at the start of b and returns its
// length; complete is false when b ends before the sequence does.
func (s *screen) escape(b []byte) (n int, complete bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '[': // CSI: parameters and intermediates, then a final byte
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				s.cursor(b[i])
				return i + 1, true
			}
		}
		return 0, false
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: a string up to BEL or ST
		for i := 2; i < len(b); i++ {
			end := 0
			switch {
			case b[i] == bel && b[1] == ']':
				end = 1
			case b[i] == esc && i+1 < len(b) && b[i+1] == '\\':
				end = 2
			case b[i] == esc && i+1 == len(b):
				return 0, false
			}
			if end > 0 {
				if b[1] == ']' {
					s.osc(string(b[2:i]))
				}
				return i + end, true
			}
		}
		return 0, false
	case '(', ')', '*', '+', '#', '%': // designate a character set and the like: one more byte
		if len(b) < 3 {
			return 0, false
		}
		return 3, true
	}
	return 2, true // ESC 7, ESC 8, ESC =, ESC >, ESC M…
}

// cursor renders a CSI sequence's effect on the text: a move along the line
// separates words, a move to another line breaks the line.
func (s *screen) cursor(final byte) {
	switch final {
	case 'G', 'C', '`', 'a', 'X': // to a column, forward, erase characters
		s.text = append(s.text, ' ')
	case 'A', 'B', 'E', 'F', 'H', 'f', 'd', 'e':
		s.text = append(s.text, '\n')
	}
}

// osc keeps an OSC 8 hyperlink's target ("8;params;URI").
func (s *screen) osc(body string) {
	rest, ok := strings.CutPrefix(body, "8;")
	if !ok {
		return
	}
	if _, target, ok := strings.Cut(rest, ";"); ok && target != "" && len(s.links) < maxLinks {
		s.links = append(s.links, target)
	}
}

var spaces = regexp.MustCompile(`[ \x{a0}]+`)

// lines is the visible text as trimmed, non-empty lines, runs of spaces
// made one.
func (s *screen) lines() []string { return textLines(s.text) }

func textLines(text []byte) []string {
	var out []string
	for _, l := range strings.Split(string(text), "\n") {
		if l = strings.TrimSpace(spaces.ReplaceAllString(l, " ")); l != "" {
			out = append(out, l)
		}
	}
	return out
}

var urlRe = regexp.MustCompile(`https://[^\s"'<>\x60]+`)

// authURL is the first https URL the program showed: a hyperlink's target
// when it made one (the visible text of a long link may be cut or wrapped),
// else one in the text.
func (s *screen) authURL() string {
	for _, l := range s.links {
		if u := httpsURL(l); u != "" {
			return u
		}
	}
	for _, m := range urlRe.FindAllString(string(s.text), -1) {
		if u := httpsURL(strings.TrimRight(m, ".,;:)]")); u != "" {
			return u
		}
	}
	return ""
}

func httpsURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

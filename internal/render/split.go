package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// TelegramTextLimit is Telegram's maximum message length, counted after
	// entity parsing. Whether the unit is code points or UTF-16 code units is
	// undocumented; counting UTF-16 units is safe under both readings.
	TelegramTextLimit = 4096
	// SafeChunkLimit leaves headroom under [TelegramTextLimit] for a
	// "continued (i/N)" header or footer added after splitting.
	SafeChunkLimit = 4000
)

// minChunkLimit is the smallest limit SplitHTML honours: one astral rune
// (an emoji) is two UTF-16 units and cannot be split.
const minChunkLimit = 2

// MarkdownChunks renders md with [MarkdownToHTML] and splits the result with
// [SplitHTML]. Each chunk is a self-contained Telegram HTML message.
func MarkdownChunks(md string, limit int) []string {
	return SplitHTML(MarkdownToHTML(md), limit)
}

// SplitHTML splits Telegram HTML into chunks whose visible text (see
// [VisibleLen]) is at most limit UTF-16 units each. Cuts prefer a blank line,
// then a newline, then a space, as long as that keeps a chunk at least half
// full; otherwise the chunk is cut hard, on a rune boundary that does not
// separate an emoji from its modifiers (unless one cluster alone exceeds the
// limit). Cuts never fall inside a tag, an entity or a surrogate pair. Tags
// open at a cut are closed at the end of the chunk and reopened, attributes
// included, at the start of the next one, so every chunk is valid on its
// own; a code block continues as <pre><code class="language-x"> in the next
// chunk. The space or newlines at a cut are dropped, and chunks with no
// visible non-whitespace text are omitted because Telegram refuses empty
// messages; no other text is lost.
//
// Limits below 2 (one emoji) are raised to 2, so a budget computed by the
// caller that runs out yields tiny chunks rather than oversized ones. Blank
// input yields no chunks, so callers must handle an empty result.
func SplitHTML(s string, limit int) []string {
	limit = max(limit, minChunkLimit)
	if VisibleLen(s) <= limit {
		if isBlankHTML(s) {
			return nil
		}
		return []string{s}
	}
	sp := splitter{src: s, limit: limit}
	sp.run()
	return sp.chunks
}

// openTag is one element of an immutable stack of open tags. Snapshots of
// the stack at candidate cut points are just pointers, so recording a
// candidate at every space costs nothing.
type openTag struct {
	parent *openTag
	name   string
	raw    string // the start tag exactly as written, for reopening
}

func (t *openTag) pop(name string) *openTag {
	for p := t; p != nil; p = p.parent {
		if p.name == name {
			return p.parent
		}
	}
	return t // stray end tag: the stack is unchanged
}

// cutPoint is a place where a chunk may end. The chunk ends before byte off
// (visible offset cum); the next one starts at byte next (visible offset
// nextCum), so the bytes in between — the whitespace at the cut — are
// dropped.
type cutPoint struct {
	ok      bool
	off     int
	cum     int
	next    int
	nextCum int
	stack   *openTag
}

type splitter struct {
	src    string
	limit  int
	chunks []string

	start      int // byte offset where the current chunk's content starts
	startCum   int // visible offset of start
	startStack *openTag

	blank, newline, space, hard cutPoint
}

func (sp *splitter) run() {
	s := sp.src
	var stack *openTag
	cum := 0
	prevRune := rune(-1)
	prevNewlineEnd := -1 // byte end of the previous atom if it was a literal "\n"
	for i := 0; i < len(s); {
		if isPlainByte(s[i]) && prevRune != zeroWidthJoiner {
			// Fastest path: a run of ASCII that is neither markup nor a
			// whitespace cut candidate, and fits the chunk, only moves the
			// hard-cut candidate to its last byte.
			j := i + 1
			for j < len(s) && isPlainByte(s[j]) {
				j++
			}
			if cum+(j-i)-sp.startCum <= sp.limit {
				last := cum + (j - i) - 1
				sp.hard = cutPoint{ok: true, off: j - 1, cum: last, next: j - 1, nextCum: last, stack: stack}
				cum += j - i
				prevRune = rune(s[j-1])
				prevNewlineEnd = -1
				i = j
				continue
			}
		}
		var a atom
		var r rune
		if c := s[i]; c < utf8.RuneSelf && c != '<' && c != '&' {
			// Fast path: plain ASCII is most of any message.
			a = atom{kind: atomText, start: i, end: i + 1, units: 1}
			r = rune(c)
		} else {
			a = nextAtom(s, i)
			switch a.kind {
			case atomStartTag:
				stack = &openTag{parent: stack, name: a.name, raw: s[a.start:a.end]}
				prevNewlineEnd = -1
				i = a.end
				continue
			case atomEndTag:
				stack = stack.pop(a.name)
				prevNewlineEnd = -1
				i = a.end
				continue
			case atomVoidTag:
				prevNewlineEnd = -1
				i = a.end
				continue
			}
			r = a.firstRune(s)
		}

		if !isGraphemeExtender(r) && prevRune != zeroWidthJoiner {
			sp.hard = cutPoint{ok: true, off: i, cum: cum, next: i, nextCum: cum, stack: stack}
		}
		if a.end-a.start == 1 {
			switch s[i] {
			case '\n':
				if prevNewlineEnd == i {
					sp.blank = cutPoint{ok: true, off: i - 1, cum: cum - 1, next: a.end, nextCum: cum + 1, stack: stack}
				}
				sp.newline = cutPoint{ok: true, off: i, cum: cum, next: a.end, nextCum: cum + 1, stack: stack}
			case ' ', '\t':
				sp.space = cutPoint{ok: true, off: i, cum: cum, next: a.end, nextCum: cum + 1, stack: stack}
			}
		}
		for cum+a.units-sp.startCum > sp.limit {
			// Last resort, when even a grapheme cluster is over the limit:
			// any rune boundary.
			here := cutPoint{ok: true, off: i, cum: cum, next: i, nextCum: cum, stack: stack}
			c, found := sp.choose(here)
			if !found {
				break // a single atom larger than the limit; nothing to cut
			}
			// Newlines right after the cut would only open the next
			// message with blank lines (a blank line found too late to be
			// the preferred cut), so they go with the cut.
			for c.next < len(s) && s[c.next] == '\n' {
				c.next++
				c.nextCum++
			}
			sp.emit(s[sp.start:c.off], c.stack)
			sp.start, sp.startCum, sp.startStack = c.next, c.nextCum, c.stack
		}
		if a.end-a.start == 1 && s[i] == '\n' {
			prevNewlineEnd = a.end
		} else {
			prevNewlineEnd = -1
		}
		prevRune = r
		cum += a.units
		i = a.end
	}
	if sp.start < len(s) {
		sp.emit(s[sp.start:], nil)
	}
}

// isPlainByte reports whether c is ASCII text with no meaning to the
// splitter: not markup, not an entity, not whitespace.
func isPlainByte(c byte) bool {
	return c > ' ' && c < utf8.RuneSelf && c != '<' && c != '&'
}

// choose picks where the current chunk ends: the best whitespace cut that
// keeps the chunk at least half full, else the latest cut of any kind, else
// the fallback.
func (sp *splitter) choose(fallback cutPoint) (cutPoint, bool) {
	usable := func(c cutPoint) bool {
		return c.ok && c.off >= sp.start && c.cum > sp.startCum
	}
	half := sp.limit / 2
	for _, c := range [...]cutPoint{sp.blank, sp.newline, sp.space} {
		if usable(c) && c.cum-sp.startCum >= half {
			return c, true
		}
	}
	var best cutPoint
	for _, c := range [...]cutPoint{sp.hard, sp.blank, sp.newline, sp.space} {
		if usable(c) && (!best.ok || c.cum > best.cum) {
			best = c
		}
	}
	if !best.ok && usable(fallback) {
		best = fallback
	}
	return best, best.ok
}

// emit appends one chunk: the tags open at its start are reopened, and the
// tags open at its end (closeStack) are closed.
func (sp *splitter) emit(body string, closeStack *openTag) {
	if isBlankHTML(body) {
		return
	}
	var b strings.Builder
	b.Grow(len(body) + 64)
	writeOpenTags(&b, sp.startStack)
	b.WriteString(body)
	for t := closeStack; t != nil; t = t.parent {
		b.WriteString("</")
		b.WriteString(t.name)
		b.WriteByte('>')
	}
	sp.chunks = append(sp.chunks, b.String())
}

// writeOpenTags writes the stack's start tags outermost first.
func writeOpenTags(b *strings.Builder, t *openTag) {
	if t == nil {
		return
	}
	writeOpenTags(b, t.parent)
	b.WriteString(t.raw)
}

// isBlankHTML reports whether html shows nothing but whitespace.
func isBlankHTML(s string) bool {
	for i := 0; i < len(s); {
		a := nextAtom(s, i)
		if a.kind == atomText && strings.TrimSpace(a.text(s)) != "" {
			return false
		}
		i = a.end
	}
	return true
}

// isGraphemeExtender reports whether r attaches to the rune before it, so a
// hard cut must not fall just before r. It covers the cases that matter for
// chat text (combining marks, variation selectors, joiners, skin tones and
// tag sequences) without a full grapheme-cluster implementation.
func isGraphemeExtender(r rune) bool {
	switch {
	case r == zeroWidthJoiner, isVariationSelector(r):
		return true
	case r >= 0x1F3FB && r <= 0x1F3FF: // emoji skin-tone modifiers
		return true
	case r >= 0xE0020 && r <= 0xE007F: // emoji tag sequences (flags of regions)
		return true
	case r < 0x300:
		return false
	}
	return unicode.In(r, unicode.Mn, unicode.Me)
}

// atomKind classifies the pieces nextAtom splits HTML into.
type atomKind uint8

const (
	atomText     atomKind = iota // one visible character, literal or entity
	atomStartTag                 // <name ...>
	atomEndTag                   // </name>
	atomVoidTag                  // <name .../>, <!...>, <?...>: no content
)

// atom is the smallest unit of HTML the splitter may not cut through: a tag,
// an entity, or one literal rune.
type atom struct {
	kind       atomKind
	start, end int    // byte range in the source
	name       string // lower-case tag name, for tags
	decoded    string // the decoded text, for entities only
	units      int    // visible UTF-16 length, for text atoms
}

// text returns the characters a text atom displays.
func (a atom) text(s string) string {
	if a.decoded != "" {
		return a.decoded
	}
	return s[a.start:a.end]
}

// firstRune returns the first character a text atom displays.
func (a atom) firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(a.text(s))
	return r
}

// maxEntityLen bounds the search for an entity's closing ';': "&#x10FFFF;"
// and "&#1114111;" are the longest references Telegram decodes.
const maxEntityLen = 12

// nextAtom scans the atom starting at byte i of s. It follows Telegram's
// parser where it matters (tags, entities) and degrades gracefully on
// malformed input: a '<' that does not start a tag and an '&' that does not
// start a known entity are ordinary characters.
func nextAtom(s string, i int) atom {
	switch s[i] {
	case '<':
		if a, ok := scanTag(s, i); ok {
			return a
		}
	case '&':
		if a, ok := scanEntity(s, i); ok {
			return a
		}
	}
	if s[i] < utf8.RuneSelf {
		return atom{kind: atomText, start: i, end: i + 1, units: 1}
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return atom{kind: atomText, start: i, end: i + size, units: runeUnits(r)}
}

func scanTag(s string, i int) (atom, bool) {
	j := i + 1
	kind := atomStartTag
	if j < len(s) && s[j] == '/' {
		kind = atomEndTag
		j++
	} else if j < len(s) && (s[j] == '!' || s[j] == '?') {
		kind = atomVoidTag
		j++
	}
	nameStart := j
	for j < len(s) && isTagNameByte(s[j]) {
		j++
	}
	if j == nameStart && kind != atomVoidTag {
		return atom{}, false
	}
	name := strings.ToLower(s[nameStart:j])
	end := tagEnd(s, j)
	if end < 0 {
		return atom{}, false
	}
	if kind == atomStartTag && s[end-2] == '/' {
		kind = atomVoidTag
	}
	return atom{kind: kind, start: i, end: end, name: name}, true
}

// tagEnd returns the byte offset just past the '>' that closes a tag whose
// attributes start at j, skipping '>' inside quoted attribute values, or -1.
func tagEnd(s string, j int) int {
	var quote byte
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j + 1
		}
	}
	return -1
}

func isTagNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// scanEntity recognises the entities Telegram's parser decodes: &lt; &gt;
// &amp; &quot; and numeric references. Anything else is shown literally by
// Telegram, so it is a literal '&' here too, which keeps VisibleLen exact.
func scanEntity(s string, i int) (atom, bool) {
	limit := min(len(s), i+maxEntityLen)
	semi := strings.IndexByte(s[i+1:limit], ';')
	if semi <= 0 {
		return atom{}, false
	}
	end := i + 1 + semi + 1
	body := s[i+1 : end-1]
	var dec string
	switch body {
	case "lt":
		dec = "<"
	case "gt":
		dec = ">"
	case "amp":
		dec = "&"
	case "quot":
		dec = `"`
	default:
		r, ok := parseNumericReference(body)
		if !ok {
			return atom{}, false
		}
		dec = string(r)
	}
	return atom{kind: atomText, start: i, end: end, decoded: dec, units: UTF16Len(dec)}, true
}

// parseNumericReference parses "#123" or "#x7B" into a valid, non-NUL,
// non-surrogate code point.
func parseNumericReference(body string) (rune, bool) {
	if len(body) < 2 || body[0] != '#' {
		return 0, false
	}
	digits, base := body[1:], rune(10)
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	if digits == "" || len(digits) > 8 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(digits) {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		r = r*base + d
	}
	if r == 0 || r > utf8.MaxRune || r >= 0xD800 && r <= 0xDFFF {
		return 0, false
	}
	return r, true
}

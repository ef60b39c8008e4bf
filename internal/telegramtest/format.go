package telegramtest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxEntities is how many formatting entities Telegram keeps; the rest are
// dropped without an error (tdlib/telegram-bot-api#820).
const maxEntities = 100

// parseError is a parse-mode failure; msg is the part of the description
// after "Bad Request: can't parse entities: ", worded as tdlib words it.
type parseError struct{ msg string }

func (e *parseError) Error() string { return "can't parse entities: " + e.msg }

func parseErrorf(format string, args ...any) error {
	return &parseError{msg: fmt.Sprintf(format, args...)}
}

// errBadParseMode is returned for a parse_mode Telegram does not know.
var errBadParseMode = fmt.Errorf("unsupported parse_mode")

// parseText turns raw text in the given parse mode into the plain text and
// entities Telegram would store, then trims surrounding whitespace the way the
// server does, so "x\n" and "x" compare equal for "message is not modified".
func parseText(raw, mode string, strictAmp bool) (string, []Entity, error) {
	var (
		text string
		ents []Entity
		err  error
	)
	switch strings.ToLower(mode) {
	case "":
		text = raw
	case "html":
		text, ents, err = parseHTML(raw, strictAmp)
	case "markdownv2":
		text, ents, err = parseMarkdown(raw, false)
	case "markdown":
		text, ents, err = parseMarkdown(raw, true)
	default:
		return "", nil, errBadParseMode
	}
	if err != nil {
		return "", nil, err
	}
	sortEntities(ents)
	ents = dropNestedInCode(ents)
	text, ents = trimText(text, ents)
	if len(ents) > maxEntities {
		ents = ents[:maxEntities]
	}
	return text, ents, nil
}

// utf16Len counts UTF-16 code units, the unit of entity offsets and of the
// fake's length limits.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func sortEntities(es []Entity) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Offset != es[j].Offset {
			return es[i].Offset < es[j].Offset
		}
		return es[i].Length > es[j].Length
	})
}

// dropNestedInCode removes entities inside code and pre, which Telegram does
// not render; es must be sorted.
func dropNestedInCode(es []Entity) []Entity {
	out := es[:0]
	end := -1
	for _, e := range es {
		if e.Offset < end {
			continue
		}
		if e.Type == "code" || e.Type == "pre" {
			end = e.Offset + e.Length
		}
		out = append(out, e)
	}
	return out
}

func trimText(text string, es []Entity) (string, []Entity) {
	trimmed := strings.TrimLeft(text, " \t\r\n")
	lead := utf16Len(text[:len(text)-len(trimmed)])
	trimmed = strings.TrimRight(trimmed, " \t\r\n")
	total := utf16Len(trimmed)
	out := es[:0]
	for _, e := range es {
		start, end := max(e.Offset-lead, 0), min(e.Offset+e.Length-lead, total)
		if end > start {
			e.Offset, e.Length = start, end-start
			out = append(out, e)
		}
	}
	return trimmed, out
}

// htmlTags is the official HTML tag set (Bot API "HTML style").
var htmlTags = map[string]bool{
	"a": true, "b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"tg-emoji": true, "tg-time": true, "code": true, "pre": true, "blockquote": true,
}

var htmlEntityType = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
	"ins": "underline", "s": "strikethrough", "strike": "strikethrough",
	"del": "strikethrough", "span": "spoiler", "tg-spoiler": "spoiler", "code": "code",
	"pre": "pre", "a": "text_link", "blockquote": "blockquote",
}

type openTag struct {
	name, arg string
	start     int // UTF-16 offset in the output
}

// parseHTML follows tdlib's parse_html closely, including its error wording
// and byte offsets, because the bridge classifies errors by these strings.
// tg-emoji and tg-time are accepted but produce no entity.
func parseHTML(src string, strictAmp bool) (string, []Entity, error) {
	at := func(i int) byte {
		if i < len(src) {
			return src[i]
		}
		return 0
	}
	var (
		out   strings.Builder
		pos   int // UTF-16 length of out
		stack []openTag
		ents  []Entity
	)
	write := func(s string) { out.WriteString(s); pos += utf16Len(s) }
	for i := 0; i < len(src); {
		c := src[i]
		if c == '&' {
			if s, n, ok := decodeHTMLEntity(src[i:]); ok {
				write(s)
				i += n
				continue
			}
			if strictAmp {
				return "", nil, parseErrorf("bare \"&\" at byte offset %d must be written as \"&amp;\" (telegramtest strict mode)", i)
			}
		}
		if c != '<' {
			_, size := utf8.DecodeRuneInString(src[i:])
			write(src[i : i+size])
			i += size
			continue
		}
		begin := i
		i++
		if at(i) != '/' {
			nameStart := i
			for at(i) != 0 && !isSpace(at(i)) && at(i) != '>' {
				i++
			}
			if at(i) == 0 {
				return "", nil, parseErrorf("Unclosed start tag at byte offset %d", begin)
			}
			name := strings.ToLower(src[nameStart:i])
			if !htmlTags[name] {
				return "", nil, parseErrorf("Unsupported start tag \"%s\" at byte offset %d", name, begin)
			}
			arg, expandable, err := parseAttributes(src, &i, name, begin)
			if err != nil {
				return "", nil, err
			}
			i++ // '>'
			if name == "span" && arg != "spoiler" {
				return "", nil, parseErrorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
			}
			if name == "blockquote" && expandable {
				arg = "expandable"
			}
			stack = append(stack, openTag{name: name, arg: arg, start: pos})
			continue
		}
		if len(stack) == 0 {
			return "", nil, parseErrorf("Unexpected end tag at byte offset %d", begin)
		}
		i++ // '/'
		nameStart := i
		for at(i) != 0 && !isSpace(at(i)) && at(i) != '>' {
			i++
		}
		endName := strings.ToLower(src[nameStart:i])
		for isSpace(at(i)) {
			i++
		}
		if at(i) != '>' {
			return "", nil, parseErrorf("Unclosed end tag at byte offset %d", begin)
		}
		i++
		top := stack[len(stack)-1]
		if endName != "" && endName != top.name {
			return "", nil, parseErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top.name, endName)
		}
		stack = stack[:len(stack)-1]
		// <pre><code class="language-x"> is one pre entity with a language.
		if top.name == "code" && len(stack) > 0 && stack[len(stack)-1].name == "pre" && stack[len(stack)-1].start == top.start {
			if top.arg != "" {
				stack[len(stack)-1].arg = top.arg
			}
			continue
		}
		if e, ok := htmlEntity(top, pos); ok {
			ents = append(ents, e)
		}
	}
	if len(stack) > 0 {
		return "", nil, parseErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	return out.String(), ents, nil
}

func htmlEntity(t openTag, end int) (Entity, bool) {
	typ, ok := htmlEntityType[t.name]
	if !ok || end <= t.start {
		return Entity{}, false
	}
	e := Entity{Type: typ, Offset: t.start, Length: end - t.start}
	switch t.name {
	case "a":
		if t.arg == "" {
			return Entity{}, false
		}
		e.URL = t.arg
	case "pre":
		e.Language = t.arg
	case "blockquote":
		if t.arg == "expandable" {
			e.Type = "expandable_blockquote"
		}
	}
	return e, true
}

// parseAttributes reads attributes up to (not past) the closing '>' and
// returns the one argument the tag cares about.
func parseAttributes(src string, i *int, tag string, begin int) (arg string, expandable bool, err error) {
	at := func(j int) byte {
		if j < len(src) {
			return src[j]
		}
		return 0
	}
	for at(*i) != '>' {
		for at(*i) != 0 && isSpace(at(*i)) {
			*i++
		}
		if at(*i) == '>' {
			break
		}
		if at(*i) == 0 {
			return "", false, parseErrorf("Unclosed start tag at byte offset %d", begin)
		}
		nameStart := *i
		for at(*i) != 0 && !isSpace(at(*i)) && at(*i) != '=' && at(*i) != '>' {
			*i++
		}
		attr := strings.ToLower(src[nameStart:*i])
		if attr == "" {
			return "", false, parseErrorf("Empty attribute name in the tag \"%s\" at byte offset %d", tag, begin)
		}
		for at(*i) != 0 && isSpace(at(*i)) {
			*i++
		}
		if at(*i) != '=' {
			if tag == "blockquote" && attr == "expandable" {
				expandable = true
				continue
			}
			return "", false, parseErrorf("Expected equal sign in declaration of an attribute of the tag \"%s\" at byte offset %d", tag, begin)
		}
		*i++
		for at(*i) != 0 && isSpace(at(*i)) {
			*i++
		}
		if at(*i) == 0 {
			return "", false, parseErrorf("Unclosed start tag at byte offset %d", begin)
		}
		var value string
		if q := at(*i); q != '"' && q != '\'' {
			tokStart := *i
			for isAlnum(at(*i)) || at(*i) == '.' || at(*i) == '-' {
				*i++
			}
			value = strings.ToLower(src[tokStart:*i])
			if !isSpace(at(*i)) && at(*i) != '>' {
				return "", false, parseErrorf("Unexpected end of name token at byte offset %d", tokStart)
			}
		} else {
			*i++
			var b strings.Builder
			for at(*i) != q && at(*i) != 0 {
				if s, n, ok := decodeHTMLEntity(src[*i:]); ok {
					b.WriteString(s)
					*i += n
					continue
				}
				b.WriteByte(src[*i])
				*i++
			}
			if at(*i) == q {
				*i++
			}
			value = b.String()
		}
		if at(*i) == 0 {
			return "", false, parseErrorf("Unclosed start tag at byte offset %d", begin)
		}
		switch {
		case tag == "a" && attr == "href":
			arg = value
		case tag == "code" && attr == "class" && strings.HasPrefix(value, "language-"):
			arg = strings.TrimPrefix(value, "language-")
		case tag == "span" && attr == "class" && strings.HasPrefix(value, "tg-"):
			arg = strings.TrimPrefix(value, "tg-")
		}
	}
	return arg, expandable, nil
}

// decodeHTMLEntity decodes the entity at the start of s: the four named ones
// Telegram supports and decimal or hex numeric references.
func decodeHTMLEntity(s string) (string, int, bool) {
	end := strings.IndexByte(s, ';')
	if len(s) < 3 || s[0] != '&' || end < 2 || end > 10 {
		return "", 0, false
	}
	body := s[1:end]
	switch body {
	case "lt":
		return "<", end + 1, true
	case "gt":
		return ">", end + 1, true
	case "amp":
		return "&", end + 1, true
	case "quot":
		return "\"", end + 1, true
	}
	if body[0] != '#' || len(body) < 2 {
		return "", 0, false
	}
	base, digits := 10, body[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	n, err := strconv.ParseUint(digits, base, 32)
	r := rune(n)
	if err != nil || n == 0 || !utf8.ValidRune(r) {
		return "", 0, false
	}
	return string(r), end + 1, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// mdOpen is an open MarkdownV2 entity.
type mdOpen struct {
	kind   string // tdlib's name ("Pre:go" carries a language)
	start  int    // UTF-16 offset in the output
	byteAt int
}

var mdEntityType = map[string]string{
	"Bold": "bold", "Italic": "italic", "Underline": "underline",
	"Strikethrough": "strikethrough", "Spoiler": "spoiler", "Code": "code", "Pre": "pre",
}

// parseMarkdown is a reduced tdlib parse_markdown_v2 (legacy=false) or
// parse_markdown (legacy=true): it handles escapes, bold/italic/underline/
// strikethrough/spoiler, inline code, pre blocks and [text](url) links, and
// reproduces the reserved-character and unclosed-entity errors. Blockquotes
// and custom emoji are not emulated; the bridge renders HTML.
func parseMarkdown(src string, legacy bool) (string, []Entity, error) {
	const reserved = "_*[]()~`>#+-=|{}.!"
	at := func(i int) byte {
		if i < len(src) {
			return src[i]
		}
		return 0
	}
	var (
		out   strings.Builder
		pos   int
		stack []mdOpen
		ents  []Entity
	)
	write := func(s string) { out.WriteString(s); pos += utf16Len(s) }
	inCode := func() bool {
		return len(stack) > 0 && (stack[len(stack)-1].kind == "Code" || strings.HasPrefix(stack[len(stack)-1].kind, "Pre"))
	}
	for i := 0; i < len(src); {
		c := src[i]
		escapable := !legacy || strings.IndexByte("_*`[", at(i+1)) >= 0
		if c == '\\' && at(i+1) > 0 && at(i+1) <= 126 && escapable {
			write(src[i+1 : i+2])
			i += 2
			continue
		}
		special := strings.IndexByte(reserved, c) >= 0
		if legacy {
			special = strings.IndexByte("_*`[", c) >= 0 || c == ']' && len(stack) > 0 && stack[len(stack)-1].kind == "TextUrl"
		}
		if inCode() && c != '`' || !special {
			_, size := utf8.DecodeRuneInString(src[i:])
			write(src[i : i+size])
			i += size
			continue
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			closes, width := mdCloses(top.kind, src, i, legacy)
			if closes {
				stack = stack[:len(stack)-1]
				i += width
				e := Entity{Offset: top.start, Length: pos - top.start}
				if top.kind == "TextUrl" {
					url, n, ok := mdLinkURL(src, i)
					if !ok {
						return "", nil, parseErrorf("Can't find end of a url at byte offset %d", i)
					}
					i += n
					e.Type, e.URL = "text_link", url
				} else {
					base, lang, _ := strings.Cut(top.kind, ":")
					e.Type, e.Language = mdEntityType[base], lang
				}
				if e.Length > 0 {
					ents = append(ents, e)
				}
				continue
			}
		}
		kind, width := "", 1
		switch {
		case c == '_' && at(i+1) == '_' && !legacy:
			kind, width = "Underline", 2
		case c == '_':
			kind = "Italic"
		case c == '*':
			kind = "Bold"
		case c == '~' && !legacy:
			kind = "Strikethrough"
		case c == '|' && at(i+1) == '|' && !legacy:
			kind, width = "Spoiler", 2
		case c == '[':
			kind = "TextUrl"
		case c == '`' && at(i+1) == '`' && at(i+2) == '`':
			kind, width = "Pre", 3
		case c == '`':
			kind = "Code"
		default:
			return "", nil, parseErrorf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
		}
		open := mdOpen{kind: kind, byteAt: i}
		i += width
		if kind == "Pre" { // the first line names the language
			if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 && !strings.ContainsAny(src[i:i+nl], " `") {
				open.kind = "Pre:" + src[i:i+nl]
				i += nl + 1
			}
		}
		open.start = pos
		stack = append(stack, open)
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		if legacy {
			return "", nil, parseErrorf("Can't find end of the entity starting at byte offset %d", top.byteAt)
		}
		return "", nil, parseErrorf("Can't find end of %s entity at byte offset %d", strings.SplitN(top.kind, ":", 2)[0], top.byteAt)
	}
	return out.String(), ents, nil
}

// mdCloses reports whether the marker at src[i] ends an entity of kind.
func mdCloses(kind, src string, i int, legacy bool) (bool, int) {
	next := func(k int) byte {
		if i+k < len(src) {
			return src[i+k]
		}
		return 0
	}
	switch strings.SplitN(kind, ":", 2)[0] {
	case "Bold":
		return src[i] == '*', 1
	case "Italic":
		return src[i] == '_' && (legacy || next(1) != '_'), 1
	case "Underline":
		return src[i] == '_' && next(1) == '_', 2
	case "Strikethrough":
		return src[i] == '~', 1
	case "Spoiler":
		return src[i] == '|' && next(1) == '|', 2
	case "Code":
		return src[i] == '`', 1
	case "Pre":
		return src[i] == '`' && next(1) == '`' && next(2) == '`', 3
	case "TextUrl":
		return src[i] == ']', 1
	}
	return false, 0
}

// mdLinkURL reads "(url)" at src[i], honouring "\)" escapes.
func mdLinkURL(src string, i int) (string, int, bool) {
	if i >= len(src) || src[i] != '(' {
		return "", 0, false
	}
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch {
		case src[j] == '\\' && j+1 < len(src):
			j++
			b.WriteByte(src[j])
		case src[j] == ')':
			return b.String(), j - i + 1, true
		default:
			b.WriteByte(src[j])
		}
	}
	return "", 0, false
}

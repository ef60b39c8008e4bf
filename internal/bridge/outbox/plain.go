package outbox

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/untether/untether/internal/render"
)

// telegramTags are the tags Telegram's HTML parse mode supports. Only these
// are stripped when falling back to plain text: text that failed to parse may
// well contain a literal "<" (say "a<b") that is not a tag at all.
var telegramTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "tg-emoji": true, "tg-time": true, "code": true, "pre": true,
	"blockquote": true,
}

// plainText turns Telegram HTML into the text a reader would see: supported
// tags are removed, entities decoded, and a link whose text differs from its
// target keeps the target in parentheses so it is not lost.
func plainText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	type link struct {
		href  string
		start int
	}
	var links []link
	for i := 0; i < len(s); {
		if s[i] == '<' {
			if n, name, closing, href := parseTag(s[i:]); n > 0 && telegramTags[name] {
				switch {
				case name == "a" && !closing:
					links = append(links, link{href: href, start: b.Len()})
				case name == "a" && len(links) > 0:
					l := links[len(links)-1]
					links = links[:len(links)-1]
					text := html.UnescapeString(b.String()[l.start:])
					if target := html.UnescapeString(l.href); target != "" && target != text {
						b.WriteString(" (")
						b.WriteString(l.href)
						b.WriteString(")")
					}
				}
				i += n
				continue
			}
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+1+j])
		i += 1 + j
	}
	return html.UnescapeString(b.String())
}

// parseTag reads a tag at the start of s ("<name ...>" or "</name>"). n is 0
// when s does not start with something tag-shaped.
func parseTag(s string) (n int, name string, closing bool, href string) {
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return 0, "", false, ""
	}
	inner := s[1:end]
	if strings.HasPrefix(inner, "/") {
		closing, inner = true, inner[1:]
	}
	k := 0
	for k < len(inner) && (inner[k] >= 'a' && inner[k] <= 'z' || inner[k] >= 'A' && inner[k] <= 'Z' || inner[k] == '-') {
		k++
	}
	if k == 0 {
		return 0, "", false, ""
	}
	if k < len(inner) && inner[k] != ' ' && inner[k] != '\t' && inner[k] != '\n' && inner[k] != '/' {
		return 0, "", false, ""
	}
	name = strings.ToLower(inner[:k])
	rest := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(inner[k:]), "/"))
	if rest != "" && (closing || !hasKnownAttr(name, rest)) {
		// "<b and c >" in "a<b and c > d" is text, not a bold tag.
		return 0, "", false, ""
	}
	if name == "a" && !closing {
		href = attr(rest, "href")
	}
	return end + 1, name, closing, href
}

// tagAttrs are the attributes Telegram accepts, per tag.
var tagAttrs = map[string][]string{
	"a":          {"href="},
	"span":       {"class="},
	"code":       {"class="},
	"tg-emoji":   {"emoji-id="},
	"tg-time":    {"unix=", "format="},
	"blockquote": {"expandable"},
}

func hasKnownAttr(tag, attrs string) bool {
	attrs = strings.ToLower(attrs)
	for _, a := range tagAttrs[tag] {
		if strings.HasPrefix(attrs, a) {
			return true
		}
	}
	return false
}

// attr extracts a quoted attribute value from a tag's attribute list.
func attr(attrs, key string) string {
	i := strings.Index(strings.ToLower(attrs), key+"=")
	if i < 0 {
		return ""
	}
	v := attrs[i+len(key)+1:]
	if v == "" {
		return ""
	}
	if q := v[0]; q == '"' || q == '\'' {
		if j := strings.IndexByte(v[1:], q); j >= 0 {
			return v[1 : 1+j]
		}
		return ""
	}
	if j := strings.IndexAny(v, " \t\n/"); j >= 0 {
		return v[:j]
	}
	return v
}

// splitText cuts plain text into chunks of at most limit UTF-16 units,
// preferring a line break, then a space, in the second half of each chunk.
// Chunks are exact substrings; blank ones are dropped because Telegram
// rejects empty messages.
func splitText(s string, limit int) []string {
	var out []string
	add := func(chunk string) {
		if strings.TrimSpace(chunk) != "" {
			out = append(out, chunk)
		}
	}
	for render.UTF16Len(s) > limit {
		cut, units := 0, 0
		for cut < len(s) {
			r, size := utf8.DecodeRuneInString(s[cut:])
			if units+utf16.RuneLen(r) > limit {
				break
			}
			units += utf16.RuneLen(r)
			cut += size
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl >= cut/2 {
			cut = nl + 1
		} else if sp := strings.LastIndexByte(s[:cut], ' '); sp >= cut/2 {
			cut = sp + 1
		}
		add(s[:cut])
		s = s[cut:]
	}
	add(s)
	return out
}

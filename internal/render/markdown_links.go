package render

import (
	"html"
	"net"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// linkKind says what may be done with a link destination.
type linkKind uint8

const (
	linkPublic    linkKind = iota // a public http(s) URL: becomes <a href>
	linkLocal                     // relative, file:, localhost…: shown as code
	linkDangerous                 // javascript: and friends: dropped
)

// classifyLink decides how a (URL-escaped) destination may be rendered.
// Telegram rejects the whole message over one link it cannot accept, so
// only public http(s) hosts are trusted.
func classifyLink(dest string) linkKind {
	scheme, _, hasScheme := strings.Cut(dest, ":")
	if hasScheme {
		switch strings.ToLower(strings.TrimSpace(scheme)) {
		case "javascript", "vbscript", "data":
			return linkDangerous
		}
	}
	u, err := url.Parse(dest)
	if err != nil {
		return linkLocal
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if isPublicHost(u.Hostname()) {
			return linkPublic
		}
	}
	return linkLocal
}

// isPublicHost accepts public IPv4 addresses and dotted DNS names with an
// alphabetic top-level label, and nothing that only resolves locally.
func isPublicHost(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.To4() != nil && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsUnspecified() &&
			!ip.IsLinkLocalUnicast() && !ip.IsMulticast()
	}
	host = strings.ToLower(host)
	if host == "" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return false
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return strings.IndexFunc(tld, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 || strings.HasPrefix(tld, "xn--")
}

// link renders a Link or an Image (whose children are the alt text).
func (r *renderer) link(n ast.Node, rawDest []byte) {
	if r.w.linkDepth > 0 {
		r.inlines(n) // Telegram links cannot nest; keep the text
		return
	}
	dest := string(util.URLEscape(rawDest, true))
	switch classifyLink(dest) {
	case linkPublic:
		r.w.pushInline("a", `<a href="`+EscapeHTML(dest)+`">`)
		r.w.linkDepth++
		if n.HasChildren() {
			r.inlines(n)
		} else {
			r.w.text([]byte(dest))
		}
		r.w.linkDepth--
		r.w.popInline()
	case linkDangerous:
		r.inlines(n)
	case linkLocal:
		shown := resolveReferences(rawDest)
		label := r.plainText(n)
		r.inlines(n)
		if len(shown) == 0 || string(shown) == label {
			if label == "" {
				r.w.codeSpan(shown)
			}
			return
		}
		if label != "" {
			r.w.text([]byte(" ("))
			r.w.codeSpan(shown)
			r.w.text([]byte(")"))
		} else {
			r.w.codeSpan(shown)
		}
	}
}

func (r *renderer) autoLink(n *ast.AutoLink) {
	label := n.Label(r.src)
	if n.AutoLinkType == ast.AutoLinkURL && r.w.linkDepth == 0 {
		dest := string(util.URLEscape(n.URL(r.src), false))
		if classifyLink(dest) == linkPublic {
			r.w.pushInline("a", `<a href="`+EscapeHTML(dest)+`">`)
			r.w.text(label)
			r.w.popInline()
			return
		}
	}
	// Telegram links e-mail addresses and bare URLs in plain text itself.
	r.w.text(label)
}

// resolveReferences applies Markdown's backslash and entity unescaping to a
// link destination for display.
func resolveReferences(v []byte) []byte {
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	return util.ResolveEntityNames(v)
}

// plainText returns the text a subtree displays, without markup: code spans
// keep their content, links their label, images their alt text.
func (r *renderer) plainText(n ast.Node) string {
	var b []byte
	r.appendPlain(&b, n)
	return string(b)
}

func (r *renderer) appendPlain(b *[]byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(r.src)
			if !c.IsRaw() {
				v = decodeMarkdownText(v)
			}
			*b = append(*b, v...)
			if c.SoftLineBreak() || c.HardLineBreak() {
				*b = append(*b, ' ')
			}
		case *ast.String:
			*b = append(*b, c.Value...)
		case *ast.CodeSpan:
			*b = append(*b, r.codeSpanText(c)...)
		case *ast.AutoLink:
			*b = append(*b, c.Label(r.src)...)
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				*b = append(*b, seg.Value(r.src)...)
			}
		case *east.TaskCheckBox:
			if c.IsChecked {
				*b = append(*b, "☑ "...)
			} else {
				*b = append(*b, "☐ "...)
			}
		default:
			r.appendPlain(b, c)
		}
	}
}

// decodeMarkdownText resolves backslash escapes and entity references the
// way goldmark's HTML writer does, returning unescaped text.
func decodeMarkdownText(v []byte) []byte {
	var s sink
	gmhtml.DefaultWriter.Write(&s, v)
	return []byte(html.UnescapeString(string(s.b)))
}

package render

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser parses Claude's Markdown: CommonMark plus GFM tables, task lists
// and ~~strikethrough~~. Goldmark parsers keep no per-document state, so one
// parser serves all goroutines.
var mdParser = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.TaskList),
	goldmark.WithParserOptions(parser.WithInlineParsers(
		util.Prioritized(doubleTildeParser{}, 500),
	)),
).Parser()

// Layout constants for the plain-text rendering of block structure.
const (
	// indentUnit indents list content under its marker. Telegram uses a
	// proportional font, where three spaces are about a bullet plus a gap.
	indentUnit = "   "
	// maxIndentLevels caps list indentation so deeply nested lists stay
	// readable on a phone; deeper levels still get their own bullet glyph.
	maxIndentLevels = 8
	// thematicBreak stands in for <hr>, which Telegram lacks.
	thematicBreak = "──────────"
)

// bullets cycle by nesting depth so levels stay distinguishable even after
// the indentation cap.
var bullets = [...]string{"•", "◦", "▪", "▫"}

// MarkdownToHTML converts Markdown, as Claude writes it, into the subset of
// HTML that Telegram accepts: b, i, s, code, pre, pre>code[class], a[href]
// and blockquote. Headings become bold lines, lists become indented text
// with bullets or numbers, tables become aligned text in a pre block, images
// become links, and raw HTML is shown as text. Links are only kept when they
// point at a public http(s) host, because a single link Telegram dislikes
// makes it reject the whole message; other destinations are shown as code
// after the label, and javascript:/data:/vbscript: ones are dropped.
//
// The output is always well-formed: tags are balanced and nested the way
// Telegram requires (nothing inside code or pre, no nested links or
// blockquotes, no code inside formatting or links), and &, <, > and " are
// escaped everywhere else. Invalid UTF-8 is replaced with U+FFFD.
func MarkdownToHTML(md string) string {
	src := sanitizeSource(md)
	doc := mdParser.Parse(text.NewReader(src))
	r := renderer{src: src}
	r.w.fresh = true
	r.w.out.b = make([]byte, 0, len(src)+len(src)/4)
	r.blocks(doc)
	return string(r.w.out.b)
}

// sanitizeSource makes md safe to hand to goldmark and Telegram: valid UTF-8,
// no NUL, and "\n" line endings only (goldmark would keep '\r' inside code).
func sanitizeSource(md string) []byte {
	if utf8.ValidString(md) && !strings.ContainsAny(md, "\x00\r") {
		return []byte(md)
	}
	md = strings.ToValidUTF8(md, "\uFFFD")
	md = strings.ReplaceAll(md, "\x00", "\uFFFD")
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\r", "\n")
	return []byte(md)
}

// renderer walks the goldmark AST and drives an htmlWriter.
type renderer struct {
	src []byte
	w   htmlWriter
}

func (r *renderer) blocks(parent ast.Node) {
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		r.block(c)
	}
}

// blockGap is the number of newlines before a block: one inside a tight
// list item, otherwise a blank line.
func blockGap(n ast.Node) int {
	if item, ok := n.Parent().(*ast.ListItem); ok {
		if list, ok := item.Parent().(*ast.List); ok && list.IsTight {
			return 1
		}
	}
	return 2
}

func (r *renderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.w.breakBefore(blockGap(n))
		r.inlines(n)
	case *ast.Heading:
		r.w.breakBefore(blockGap(n))
		r.w.pushInline("b", "<b>")
		r.inlines(n)
		r.w.popInline()
	case *ast.ThematicBreak:
		r.w.breakBefore(blockGap(n))
		r.w.text([]byte(thematicBreak))
	case *ast.FencedCodeBlock:
		r.codeBlock(n, codeLanguage(n.Language(r.src)))
	case *ast.CodeBlock:
		r.codeBlock(n, "")
	case *ast.Blockquote:
		r.w.breakBefore(blockGap(n))
		r.w.openQuote()
		r.blocks(n)
		r.w.closeQuote()
	case *ast.List:
		r.w.breakBefore(blockGap(n))
		r.list(n)
	case *ast.HTMLBlock:
		r.w.breakBefore(blockGap(n))
		var raw []byte
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			raw = append(raw, seg.Value(r.src)...)
		}
		if n.HasClosure() {
			raw = append(raw, n.ClosureLine.Value(r.src)...)
		}
		r.w.plainLines(bytes.TrimRight(raw, "\n"))
	case *east.Table:
		r.table(n)
	default:
		// Unknown block kinds from future extensions: keep their text.
		if n.HasChildren() {
			r.blocks(n)
		}
	}
}

func (r *renderer) codeBlock(n ast.Node, lang string) {
	var code []byte
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		code = append(code, seg.Value(r.src)...)
	}
	code = bytes.TrimRight(code, "\n")
	if len(code) == 0 {
		return // an empty pre is an empty entity; there is nothing to show
	}
	r.w.breakBefore(blockGap(n))
	r.w.pre(lang, code)
}

// codeLanguage keeps the first word of a fence's info string if it looks
// like a language name, so it is safe inside class="language-…".
func codeLanguage(info []byte) string {
	for i, c := range info {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '+' || c == '-' || c == '#' || c == '.'
		if !ok {
			if c == ' ' || c == '\t' || c == '{' || c == ',' {
				info = info[:i]
				break
			}
			return ""
		}
	}
	return string(info)
}

func (r *renderer) list(l *ast.List) {
	depth := 0
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	gap := 2
	if l.IsTight {
		gap = 1
	}
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			r.w.breakBefore(gap)
		}
		var marker string
		switch box := taskCheckBox(item); {
		case l.IsOrdered():
			marker = strconv.Itoa(num) + "."
			num++
		case box != nil && box.IsChecked:
			marker = "☑"
		case box != nil:
			marker = "☐"
		default:
			marker = bullets[depth%len(bullets)]
		}
		r.w.listItem(marker, depth < maxIndentLevels)
		r.blocks(item)
		r.w.endListItem(depth < maxIndentLevels)
	}
}

// taskCheckBox returns the GFM task checkbox that starts a list item, if any.
func taskCheckBox(item ast.Node) *east.TaskCheckBox {
	if first := item.FirstChild(); first != nil {
		if box, ok := first.FirstChild().(*east.TaskCheckBox); ok {
			return box
		}
	}
	return nil
}

func (r *renderer) inlines(parent ast.Node) {
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		value := n.Segment.Value(r.src)
		if n.IsRaw() {
			r.w.text(value)
		} else {
			r.w.markdownText(value)
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.w.lineBreak()
		}
	case *ast.String:
		switch {
		case n.IsCode():
			// Already HTML; normalise it to our escaping.
			r.w.text([]byte(html.UnescapeString(string(n.Value))))
		case n.IsRaw():
			r.w.text(n.Value)
		default:
			r.w.markdownText(n.Value)
		}
	case *ast.CodeSpan:
		r.w.codeSpan(r.codeSpanText(n))
	case *ast.Emphasis:
		if n.Level >= 2 {
			r.w.pushInline("b", "<b>")
		} else {
			r.w.pushInline("i", "<i>")
		}
		r.inlines(n)
		r.w.popInline()
	case *east.Strikethrough:
		r.w.pushInline("s", "<s>")
		r.inlines(n)
		r.w.popInline()
	case *ast.Link:
		r.link(n, n.Destination)
	case *ast.Image:
		r.link(n, n.Destination)
	case *ast.AutoLink:
		r.autoLink(n)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			r.w.plainLines(seg.Value(r.src))
		}
	case *east.TaskCheckBox:
		if _, ok := n.Parent().Parent().(*ast.ListItem); ok && n.PreviousSibling() == nil {
			if list, ok := n.Parent().Parent().Parent().(*ast.List); ok && !list.IsOrdered() {
				return // shown as the item's marker instead of a bullet
			}
		}
		if n.IsChecked {
			r.w.text([]byte("☑ "))
		} else {
			r.w.text([]byte("☐ "))
		}
	default:
		r.inlines(n)
	}
}

// codeSpanText returns a code span's content; line endings inside a code
// span are spaces in CommonMark.
func (r *renderer) codeSpanText(n *ast.CodeSpan) []byte {
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var v []byte
		switch c := c.(type) {
		case *ast.Text:
			v = c.Segment.Value(r.src)
		case *ast.String:
			v = c.Value
		}
		if bytes.HasSuffix(v, []byte("\n")) {
			v = append(v[:len(v)-1:len(v)-1], ' ')
		}
		b = append(b, v...)
	}
	return b
}

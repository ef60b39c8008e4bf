package render

import (
	"bytes"
	"html"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
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

// table renders a GFM table as aligned monospace text: Telegram has no
// table markup, and a pre block is the only place columns line up.
func (r *renderer) table(t *east.Table) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.Join(strings.Fields(r.plainText(cell)), " "))
		}
		rows = append(rows, cells)
	}
	cols := len(t.Alignments)
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for ri, row := range rows {
		if ri > 0 {
			b.WriteByte('\n')
		}
		var line strings.Builder
		for i := 0; i < cols; i++ {
			if i > 0 {
				line.WriteString(" | ")
			}
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			align := east.AlignNone
			if i < len(t.Alignments) {
				align = t.Alignments[i]
			}
			line.WriteString(pad(cell, widths[i], align))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		if ri == 0 {
			b.WriteByte('\n')
			for i, w := range widths {
				if i > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", max(w, 1)))
			}
		}
	}
	r.w.breakBefore(blockGap(t))
	r.w.pre("", []byte(b.String()))
}

func pad(s string, width int, align east.Alignment) string {
	gap := width - displayWidth(s)
	if gap <= 0 {
		return s
	}
	switch align {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		left := gap / 2
		return strings.Repeat(" ", left) + s + strings.Repeat(" ", gap-left)
	default:
		return s + strings.Repeat(" ", gap)
	}
}

// displayWidth approximates how many monospace cells s occupies: East Asian
// wide characters and emoji take two, combining marks and joiners none.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case isGraphemeExtender(r):
		case isWide(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

func isWide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115F, // Hangul Jamo
		r >= 0x2E80 && r <= 0x303E, // CJK radicals, punctuation
		r >= 0x3041 && r <= 0x33FF, // kana, CJK symbols
		r >= 0x3400 && r <= 0x4DBF, // CJK extension A
		r >= 0x4E00 && r <= 0x9FFF, // CJK unified ideographs
		r >= 0xA000 && r <= 0xA4CF, // Yi
		r >= 0xAC00 && r <= 0xD7A3, // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF, // CJK compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F, // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60, // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F, // pictographs, emoticons
		r >= 0x1F680 && r <= 0x1F6FF, // transport
		r >= 0x1F900 && r <= 0x1F9FF, // supplemental symbols
		r >= 0x20000 && r <= 0x3FFFD: // CJK extensions B+
		return true
	}
	return false
}

// doubleTildeParser is GFM strikethrough restricted to "~~". Goldmark's own
// extension also accepts a single '~', which Claude routinely writes to mean
// "approximately" ("~5 min … ~2x"), striking out whole sentences.
type doubleTildeParser struct{}

func (doubleTildeParser) Trigger() []byte { return []byte{'~'} }

func (doubleTildeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, tildeDelimiter{})
	if node == nil || node.OriginalLength != 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (doubleTildeParser) CloseBlock(parent ast.Node, pc parser.Context) {}

type tildeDelimiter struct{}

func (tildeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (tildeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (tildeDelimiter) OnMatch(consumes int) ast.Node { return east.NewStrikethrough() }

// sink is the output buffer. It implements goldmark's util.BufWriter so
// goldmark's own text writer can resolve Markdown escapes and entities
// straight into it.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *sink) WriteString(p string) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *sink) WriteByte(c byte) error {
	s.b = append(s.b, c)
	return nil
}

func (s *sink) WriteRune(r rune) (int, error) {
	n := len(s.b)
	s.b = utf8.AppendRune(s.b, r)
	return len(s.b) - n, nil
}

func (s *sink) Available() int { return cap(s.b) - len(s.b) }
func (s *sink) Buffered() int  { return len(s.b) }
func (s *sink) Flush() error   { return nil }

// inlineTag is an open formatting element. Tags are written lazily, just
// before the first visible character inside them, so no empty elements are
// produced and a code span can close and later reopen them.
type inlineTag struct {
	name    string
	open    string // the start tag, attributes included
	dup     bool   // the same tag is already open further out; never written
	written bool   // the start tag is in the output and must be closed
}

// htmlWriter assembles Telegram HTML. It owns the invariants the renderer
// relies on: newlines between blocks are emitted lazily (so the output has no
// leading or trailing blank lines), list indentation is added at the start
// of each line, and inline tags are balanced and legally nested.
type htmlWriter struct {
	out sink

	pending     int  // newlines owed before the next visible output
	fresh       bool // at the start of the document, a quote or a list item: gaps are dropped
	lineHasText bool // the current output line has visible text
	markerSpace bool // a list marker was written and wants a space before its text
	indent      []byte

	inline     []inlineTag
	linkDepth  int
	quoteDepth int
}

// breakBefore asks for n newlines before the next visible output.
func (w *htmlWriter) breakBefore(n int) {
	if !w.fresh {
		w.pending = max(w.pending, n)
	}
}

// lineBreak is a soft or hard line break inside a paragraph.
func (w *htmlWriter) lineBreak() { w.breakBefore(1) }

// flush writes the owed newlines, then the list indentation if indent.
func (w *htmlWriter) flush(indent bool) {
	if w.pending == 0 {
		return
	}
	for range w.pending {
		w.out.b = append(w.out.b, '\n')
	}
	w.pending = 0
	w.lineHasText = false
	if indent {
		w.out.b = append(w.out.b, w.indent...)
	}
}

// beginText prepares for visible inline text: newlines, indentation, the
// space after a list marker, and any formatting tags not yet written.
func (w *htmlWriter) beginText() {
	w.flush(true)
	if w.markerSpace {
		w.out.b = append(w.out.b, ' ')
		w.markerSpace = false
	}
	for i := range w.inline {
		if t := &w.inline[i]; !t.dup && !t.written {
			w.out.b = append(w.out.b, t.open...)
			t.written = true
		}
	}
	w.fresh = false
	w.lineHasText = true
}

// beginBlockElement prepares for pre or blockquote, which Telegram shows as
// blocks: they start on a line of their own, without list indentation.
func (w *htmlWriter) beginBlockElement() {
	w.flush(false)
	w.markerSpace = false
	if w.lineHasText {
		w.out.b = append(w.out.b, '\n')
	}
	w.fresh = false
}

// text writes plain text, escaping it.
func (w *htmlWriter) text(p []byte) {
	if len(p) == 0 {
		return
	}
	w.beginText()
	w.out.b = appendEscaped(w.out.b, p)
}

// markdownText writes Markdown text, resolving backslash escapes and entity
// references and escaping the result.
func (w *htmlWriter) markdownText(p []byte) {
	if len(p) == 0 {
		return
	}
	w.beginText()
	gmhtml.DefaultWriter.Write(&w.out, p)
}

// plainLines writes text that may contain newlines, such as raw HTML shown
// as text, keeping list indentation on each line.
func (w *htmlWriter) plainLines(p []byte) {
	for {
		line, rest, more := bytes.Cut(p, []byte{'\n'})
		w.text(line)
		if !more {
			return
		}
		w.lineBreak()
		p = rest
	}
}

func (w *htmlWriter) pushInline(name, open string) {
	dup := false
	for _, t := range w.inline {
		if t.name == name && !t.dup {
			dup = true
			break
		}
	}
	w.inline = append(w.inline, inlineTag{name: name, open: open, dup: dup})
}

func (w *htmlWriter) popInline() {
	t := w.inline[len(w.inline)-1]
	w.inline = w.inline[:len(w.inline)-1]
	if t.written {
		w.closeTag(t.name)
	}
}

func (w *htmlWriter) closeTag(name string) {
	w.out.b = append(w.out.b, "</"...)
	w.out.b = append(w.out.b, name...)
	w.out.b = append(w.out.b, '>')
}

// codeSpan writes inline code. Telegram forbids code inside bold, italic,
// strikethrough or links, so open formatting is closed around it (and
// reopened lazily afterwards); inside a link the code is plain text instead,
// which keeps the whole label clickable.
func (w *htmlWriter) codeSpan(p []byte) {
	if len(p) == 0 {
		return
	}
	if w.linkDepth > 0 {
		w.text(p)
		return
	}
	w.flush(true)
	if w.markerSpace {
		w.out.b = append(w.out.b, ' ')
		w.markerSpace = false
	}
	for i := len(w.inline) - 1; i >= 0; i-- {
		if t := &w.inline[i]; t.written {
			w.closeTag(t.name)
			t.written = false
		}
	}
	w.out.b = append(w.out.b, "<code>"...)
	w.out.b = appendEscaped(w.out.b, p)
	w.out.b = append(w.out.b, "</code>"...)
	w.fresh = false
	w.lineHasText = true
}

// pre writes a code block, with a language class when lang is set.
func (w *htmlWriter) pre(lang string, code []byte) {
	w.beginBlockElement()
	if lang != "" {
		w.out.b = append(w.out.b, `<pre><code class="language-`...)
		w.out.b = appendEscaped(w.out.b, []byte(lang))
		w.out.b = append(w.out.b, `">`...)
		w.out.b = appendEscaped(w.out.b, code)
		w.out.b = append(w.out.b, "</code></pre>"...)
	} else {
		w.out.b = append(w.out.b, "<pre>"...)
		w.out.b = appendEscaped(w.out.b, code)
		w.out.b = append(w.out.b, "</pre>"...)
	}
	w.lineHasText = true
}

// openQuote starts a blockquote. Telegram cannot nest blockquotes, so inner
// quotes are flattened into the outermost one.
func (w *htmlWriter) openQuote() {
	if w.quoteDepth == 0 {
		w.beginBlockElement()
		w.out.b = append(w.out.b, "<blockquote>"...)
		w.fresh = true
	}
	w.quoteDepth++
}

func (w *htmlWriter) closeQuote() {
	w.quoteDepth--
	if w.quoteDepth == 0 {
		w.closeTag("blockquote")
		w.fresh = false
		w.lineHasText = true
	}
}

// listItem writes an item's marker on a new line and indents the item's
// continuation lines, up to the indentation cap.
func (w *htmlWriter) listItem(marker string, indent bool) {
	w.flush(true)
	if w.markerSpace {
		w.out.b = append(w.out.b, ' ')
	}
	w.out.b = appendEscaped(w.out.b, []byte(marker))
	w.markerSpace = true
	w.lineHasText = true
	w.fresh = true
	if indent {
		w.indent = append(w.indent, indentUnit...)
	}
}

func (w *htmlWriter) endListItem(indent bool) {
	if indent {
		w.indent = w.indent[:len(w.indent)-len(indentUnit)]
	}
	w.markerSpace = false
	w.fresh = false
}

package render

import (
	"bytes"
	"unicode/utf8"

	gmhtml "github.com/yuin/goldmark/renderer/html"
)

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

func (s *sink) Buffered() int { return len(s.b) }

func (s *sink) Flush() error { return nil }

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

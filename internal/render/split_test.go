package render_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
)

func TestSplitHTML(t *testing.T) {
	tests := []struct {
		name  string
		html  string
		limit int
		want  []string
	}{
		{"empty", "", 10, nil},
		{"blank", " \n\n ", 10, nil},
		{"blank markup", "<b> </b>\n<pre>\n</pre>", 10, nil},
		{"fits", "<b>hello</b> world", 11, []string{"<b>hello</b> world"}},
		{"tags do not count", `<a href="https://example.com/very/long/path">ab</a>`, 2, []string{`<a href="https://example.com/very/long/path">ab</a>`}},
		{"entities count once", "&lt;&gt;&amp;&quot;", 4, []string{"&lt;&gt;&amp;&quot;"}},
		{"prefers blank line", "aaaa\nbb\n\ncc dd ee", 10, []string{"aaaa\nbb", "cc dd ee"}},
		{"then newline", "aaa bbb\ncc dd ee", 10, []string{"aaa bbb", "cc dd ee"}},
		{"then space", "aaa bbb cc", 8, []string{"aaa bbb", "cc"}},
		{"blank line only when at least half full", "a\n\nbbbbbb cccc", 10, []string{"a\n\nbbbbbb", "cccc"}},
		{"hard cut without whitespace", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"hard cut when whitespace is too early", "a bcdefghij", 6, []string{"a bcde", "fghij"}},
		{"never inside an entity", "&amp;&amp;&amp;", 2, []string{"&amp;&amp;", "&amp;"}},
		{"never inside a surrogate pair", "😀😀😀", 3, []string{"😀", "😀", "😀"}},
		{"keeps skin tone with its emoji", "ab👍🏽", 5, []string{"ab", "👍🏽"}},
		{"keeps zwj sequence together", "a👩‍💻", 5, []string{"a", "👩‍💻"}},
		{"keeps combining mark with its letter", "abe\u0301", 3, []string{"ab", "e\u0301"}},
		{"splits a cluster only if it alone exceeds the limit", "👨‍👩‍👧", 4, []string{"👨\u200d", "👩\u200d", "👧"}},
		{"closes and reopens tags", "<b>aaa bbb</b>", 4, []string{"<b>aaa</b>", "<b>bbb</b>"}},
		{"reopens nested tags in order", "<blockquote><i>aa <b>bb cc</b></i></blockquote>", 6, []string{"<blockquote><i>aa <b>bb</b></i></blockquote>", "<blockquote><i><b>cc</b></i></blockquote>"}},
		{"reopens link with its href", `<a href="https://x.com/?a=1&amp;b=2">one two</a>`, 4, []string{`<a href="https://x.com/?a=1&amp;b=2">one</a>`, `<a href="https://x.com/?a=1&amp;b=2">two</a>`}},
		{"reopens pre code with language", "<pre><code class=\"language-go\">a := 1\nb := 2\n\nc := 3</code></pre>", 13, []string{"<pre><code class=\"language-go\">a := 1\nb := 2</code></pre>", "<pre><code class=\"language-go\">c := 3</code></pre>"}},
		{"code block indentation survives a newline cut", "<pre>if x {\n\treturn\n}</pre>", 9, []string{"<pre>if x {</pre>", "<pre>\treturn\n}</pre>"}},
		{"tags right after the cut stay in the next chunk", "aaaa\n\n<b>bbbb</b>", 5, []string{"aaaa", "<b>bbbb</b>"}},
		{"tags right before the cut stay in the previous chunk", "<i>aaaa</i>\nbbbb", 5, []string{"<i>aaaa</i>", "bbbb"}},
		{"whitespace only chunks are dropped", "aaaa" + strings.Repeat(" ", 20) + "bbbb", 5, []string{"aaaa ", "bbbb"}},
		{"limit below two is raised to two", "😀😀", 1, []string{"😀", "😀"}},
		{"zero limit is raised to two", "abc", 0, []string{"ab", "c"}},
		{"negative limit is raised to two", "abc", -5, []string{"ab", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.SplitHTML(tt.html, tt.limit)
			assert.Equal(t, tt.want, got)
			limit := max(tt.limit, 2)
			for i, c := range got {
				assert.True(t, utf8.ValidString(c), "chunk %d", i)
				assert.LessOrEqual(t, render.VisibleLen(c), limit, "chunk %d", i)
			}
		})
	}
}

// TestSplitHTMLMalformed feeds markup the renderer never produces; the
// splitter must still respect the limit and lose no text.
func TestSplitHTMLMalformed(t *testing.T) {
	for _, in := range []string{
		"a < b & c > d and more text here",
		"</b>stray end tag and more text</i>",
		"<b>never closed and more text",
		"<a href='x>y'>quoted gt</a> and more",
		"&unknown; &#0; &#xD800; &#1114112; &#65; &",
		"<br/><!-- c --> text <?pi?> more text",
	} {
		t.Run(in, func(t *testing.T) {
			chunks := render.SplitHTML(in, 6)
			require.NotEmpty(t, chunks)
			var plain strings.Builder
			for _, c := range chunks {
				assert.LessOrEqual(t, render.VisibleLen(c), 6, c)
				plain.WriteString(render.HTMLToPlain(c))
			}
			assert.Equal(t, stripSpace(render.HTMLToPlain(in)), stripSpace(plain.String()))
		})
	}
}

// TestSplitProperties runs the chunking contract over pseudo-random
// Markdown assembled from realistic fragments, at many limits. The seed is
// fixed, so failures reproduce.
func TestSplitProperties(t *testing.T) {
	fragments := []string{
		"# Heading with `code`\n\n", "Plain sentence with a < b & c > d. ", "**bold _both_ bold** ",
		"[link](https://example.com/?a=1&b=2) ", "[local](./x.go) ", "`inline <code>` ", "emoji 😀👍🏽👨‍👩‍👧 ",
		"中文字符测试 ", "\n\n", "\n", "- item one\n- item two\n  - nested\n", "1. first\n2. second\n",
		"> quote line\n> > nested\n\n", "```go\nfunc f() { if a < b { return } }\n\tindented()\n```\n\n",
		"```\nplain & pre\n```\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n", "~~gone~~ ", "---\n\n",
		"<div>raw</div>\n\n", strings.Repeat("long", 30) + " ",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		}
		md := b.String()
		html := render.MarkdownToHTML(md)
		require.NoError(t, validateTelegramHTML(html), "case %d: %q", i, md)
		limit := 2 + rng.IntN(300)
		t.Run(fmt.Sprintf("case%d_limit%d", i, limit), func(t *testing.T) {
			checkChunks(t, html, render.SplitHTML(html, limit), limit)
		})
	}
}

func TestValidatorRejects(t *testing.T) {
	for _, bad := range []string{
		"<b>unclosed", "</b>", "<b><i>x</b></i>", "<p>x</p>", "<span class=\"tg-spoiler\">x</span>",
		"<b><b>x</b></b>", "<b><code>x</code></b>", "<a href=\"https://x.com\"><code>x</code></a>",
		"<code><b>x</b></code>", "<pre><b>x</b></pre>", "<pre>x<code class=\"language-go\">y</code></pre>",
		"<pre><code class=\"language-go\">y</code>x</pre>", "<code class=\"language-go\">x</code>",
		"<blockquote><blockquote>x</blockquote></blockquote>", "<b><blockquote>x</blockquote></b>",
		"<a href=\"https://x.com\"><a href=\"https://y.com\">x</a></a>", "<a>x</a>", "<a href='x'>x</a>",
		"<b class=\"x\">x</b>", "a & b", "a > b", "&nbsp;", "\"", "\xff",
	} {
		assert.Error(t, validateTelegramHTML(bad), bad)
	}
	for _, good := range []string{
		"", "plain", "<b>a <i>b</i></b>", "<blockquote><pre>x</pre></blockquote>", "<pre><code class=\"language-go\">x</code></pre>",
		"<a href=\"https://x.com/?a=1&amp;b=2\"><b>x</b></a>", "&lt;&gt;&amp;&quot;&#128512;&#x1F600;",
	} {
		assert.NoError(t, validateTelegramHTML(good), good)
	}
}

// What follows is a small, independent validator of Telegram's HTML rules,
// used by the table, golden and fuzz tests. It deliberately shares no code
// with the package under test.

var (
	// Telegram decodes only these named entities, plus numeric ones.
	entityRE = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});`)
	hrefRE   = regexp.MustCompile(`^ href="([^"<>]*)"$`)
	classRE  = regexp.MustCompile(`^ class="language-[A-Za-z0-9_+#.-]+"$`)
)

// allowedTags is the subset of Telegram's tags the renderer may emit.
var allowedTags = map[string]bool{
	"b": true, "i": true, "s": true, "u": true,
	"code": true, "pre": true, "a": true, "blockquote": true,
}

type openElem struct {
	name      string
	hasText   bool // pre: text seen directly inside
	codeChild bool // pre: a <code class> child was opened
	codeDone  bool // pre: that child has closed; nothing may follow
}

// validateTelegramHTML returns an error if s is not HTML Telegram would
// parse into exactly the intended entities: only allowed tags and
// attributes, balanced, nested per the Bot API's rules (code/pre contain
// nothing but pre>code[class]; code/pre only inside blockquote; no nested
// links, blockquotes or same-type entities), all of &<>" escaped, valid
// UTF-8.
func validateTelegramHTML(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("invalid UTF-8")
	}
	var stack []*openElem
	top := func() *openElem {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return fmt.Errorf("byte %d: unterminated tag", i)
			}
			tag := s[i+1 : i+j]
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				t := top()
				if t == nil || t.name != name {
					return fmt.Errorf("byte %d: </%s> does not close the innermost open tag (%v)", i, name, names(stack))
				}
				stack = stack[:len(stack)-1]
				if name == "code" {
					if p := top(); p != nil && p.name == "pre" {
						p.codeDone = true
					}
				}
			} else {
				if err := checkStart(tag, stack); err != nil {
					return fmt.Errorf("byte %d: <%s>: %w", i, tag, err)
				}
				name, _, _ := strings.Cut(tag, " ")
				if name == "code" {
					if p := top(); p != nil && p.name == "pre" {
						p.codeChild = true
					}
				}
				stack = append(stack, &openElem{name: name})
			}
			i += j + 1
			continue
		case '>', '"':
			return fmt.Errorf("byte %d: unescaped %q in text", i, c)
		case '&':
			m := entityRE.FindString(s[i:])
			if m == "" {
				return fmt.Errorf("byte %d: bare '&' or unsupported entity", i)
			}
			i += len(m)
		default:
			i++
		}
		if t := top(); t != nil && t.name == "pre" {
			if t.codeChild {
				return fmt.Errorf("byte %d: text after <code> inside <pre>", i)
			}
			t.hasText = true
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed tags %v", names(stack))
	}
	return nil
}

func checkStart(tag string, stack []*openElem) error {
	name, attrs, _ := strings.Cut(tag, " ")
	if attrs != "" {
		attrs = " " + attrs
	}
	if !allowedTags[name] {
		return fmt.Errorf("tag not allowed")
	}
	var parent *openElem
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	switch name {
	case "a":
		m := hrefRE.FindStringSubmatch(attrs)
		if m == nil {
			return fmt.Errorf("a needs exactly one quoted href")
		}
		for k := 0; k < len(m[1]); k++ {
			if m[1][k] == '&' && entityRE.FindString(m[1][k:]) == "" {
				return fmt.Errorf("bare '&' in href")
			}
		}
	case "code":
		if attrs != "" && !(parent != nil && parent.name == "pre" && classRE.MatchString(attrs)) {
			return fmt.Errorf("code attributes %q only allowed as pre>code class=language-x", attrs)
		}
	default:
		if attrs != "" {
			return fmt.Errorf("unexpected attributes %q", attrs)
		}
	}
	for _, anc := range stack {
		if anc.name == name {
			return fmt.Errorf("%s nested in itself", name)
		}
		if anc.name == "code" {
			return fmt.Errorf("nothing may nest inside code")
		}
		if anc.name == "pre" && !(name == "code" && anc == parent && !parent.hasText && !parent.codeChild) {
			return fmt.Errorf("only a leading <code class> may nest inside pre")
		}
	}
	switch name {
	case "code", "pre":
		for _, anc := range stack {
			if anc.name != "blockquote" && anc.name != "pre" {
				return fmt.Errorf("%s inside %s", name, anc.name)
			}
		}
	case "blockquote":
		if len(stack) > 0 {
			return fmt.Errorf("blockquote must not be nested in %v", names(stack))
		}
	}
	return nil
}

func names(stack []*openElem) []string {
	out := make([]string, len(stack))
	for i, e := range stack {
		out[i] = e.name
	}
	return out
}

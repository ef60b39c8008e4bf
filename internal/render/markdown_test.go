package render_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/render/markdown")

const goldenDir = "../../testdata/render/markdown"

func TestMarkdownToHTML(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"empty", "", ""},
		{"blank", " \n\n\t\n", ""},
		{"plain paragraph", "hello world", "hello world"},
		{"paragraphs separated by a blank line", "one\n\n\ntwo", "one\n\ntwo"},
		{"soft break is a newline", "one\ntwo", "one\ntwo"},
		{"hard break is a newline", "one  \ntwo\\\nthree", "one\ntwo\nthree"},
		{"bold italic strike", "**b** *i* _i_ __b__ ~~s~~", "<b>b</b> <i>i</i> <i>i</i> <b>b</b> <s>s</s>"},
		{"bold italic combined", "***both***", "<i><b>both</b></i>"},
		{"single tilde is not strikethrough", "takes ~5 min, ~2x faster, a~b~c", "takes ~5 min, ~2x faster, a~b~c"},
		{"nested same tag is not repeated", "# Title **bold**", "<b>Title bold</b>"},
		{"heading levels are bold lines", "# H1\n## H2\n###### H6\n\nSetext\n===", "<b>H1</b>\n\n<b>H2</b>\n\n<b>H6</b>\n\n<b>Setext</b>"},
		{"escapes text", `a < b > c & d "e"`, "a &lt; b &gt; c &amp; d &quot;e&quot;"},
		{"markdown entities are decoded then re-escaped", "&lt;b&gt; &amp; &copy; &#x1F600;", "&lt;b&gt; &amp; © 😀"},
		{"backslash escapes", `\*not bold\* \<x\> \\`, `*not bold* &lt;x&gt; \`},
		{"inline code escapes", "`a<b && c>d`", "<code>a&lt;b &amp;&amp; c&gt;d</code>"},
		{"inline code with backticks", "``a `b` c``", "<code>a `b` c</code>"},
		{"inline code keeps entities literal", "`&amp;`", "<code>&amp;amp;</code>"},
		{"code inside bold is split out", "**see `x` here**", "<b>see </b><code>x</code><b> here</b>"},
		{"code at the start of bold leaves no empty tag", "**`x` here**", "<code>x</code><b> here</b>"},
		{"fenced code with language", "```go\nif a < b && c > d {}\n```", `<pre><code class="language-go">if a &lt; b &amp;&amp; c &gt; d {}</code></pre>`},
		{"fenced code without language", "```\nplain\n  indented\n```", "<pre>plain\n  indented</pre>"},
		{"fenced code info string keeps first word", "```python title=\"x.py\"\npass\n```", `<pre><code class="language-python">pass</code></pre>`},
		{"fenced code with unsafe info has no class", "```\"><script>\nx\n```", "<pre>x</pre>"},
		{"indented code block", "para\n\n    code <x>\n", "para\n\n<pre>code &lt;x&gt;</pre>"},
		{"empty code block is dropped", "a\n\n```\n```\n\nb", "a\n\nb"},
		{"unclosed fence runs to the end", "```js\nlet a = 1;", `<pre><code class="language-js">let a = 1;</code></pre>`},
		{"link", "[Go](https://go.dev/doc)", `<a href="https://go.dev/doc">Go</a>`},
		{"link with ampersand", "[q](https://x.com/?a=1&b=2)", `<a href="https://x.com/?a=1&amp;b=2">q</a>`},
		{"link with quote in url", `[q](https://x.com/?q="y")`, `<a href="https://x.com/?q=%22y%22">q</a>`},
		{"link with formatting in label", "[**b** x](https://x.com)", `<a href="https://x.com"><b>b</b> x</a>`},
		{"link with code in label keeps one link", "[`fmt.Println`](https://pkg.go.dev/fmt)", `<a href="https://pkg.go.dev/fmt">fmt.Println</a>`},
		{"bold link with code", "**[a `b`](https://x.com)**", `<b><a href="https://x.com">a b</a></b>`},
		{"empty label shows url", "[](https://x.com)", `<a href="https://x.com">https://x.com</a>`},
		{"javascript link is dropped", "[click](javascript:alert(1))", "click"},
		{"javascript link mixed case", "[click](JavaScript:alert(1))", "click"},
		{"data link is dropped", "[d](data:text/html,x)", "d"},
		{"relative link shows path as code", "[the file](src/main.go)", "the file (<code>src/main.go</code>)"},
		{"relative link whose label is the path", "[src/main.go](src/main.go)", "src/main.go"},
		{"localhost link shows url as code", "[dash](http://localhost:8080/x)", "dash (<code>http://localhost:8080/x</code>)"},
		{"private ip link shows url as code", "[lan](http://10.0.0.1/)", "lan (<code>http://10.0.0.1/</code>)"},
		{"public ip link", "[ip](http://8.8.8.8/)", `<a href="http://8.8.8.8/">ip</a>`},
		{"bare host link shows url as code", "[h](http://intranet/)", "h (<code>http://intranet/</code>)"},
		{"file link shows url as code", "[f](file:///etc/passwd)", "f (<code>file:///etc/passwd</code>)"},
		{"local link inside bold closes bold around code", "**[f](a.go)**", "<b>f (</b><code>a.go</code><b>)</b>"},
		{"autolink", "<https://go.dev>", `<a href="https://go.dev">https://go.dev</a>`},
		{"email autolink is text", "<me@example.com>", "me@example.com"},
		{"localhost autolink is text", "<http://localhost:3000>", "http://localhost:3000"},
		{"bare url is left for Telegram", "see https://go.dev now", "see https://go.dev now"},
		{"image becomes link", "![diagram](https://x.com/d.png)", `<a href="https://x.com/d.png">diagram</a>`},
		{"image inside link is text", "[![alt](https://x.com/i.png)](https://x.com)", `<a href="https://x.com">alt</a>`},
		{"raw inline html is text", "a <b>bold</b> <script>x</script>", "a &lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;"},
		{"raw html block is text", "<div class=\"x\">\n<p>hi</p>\n</div>", "&lt;div class=&quot;x&quot;&gt;\n&lt;p&gt;hi&lt;/p&gt;\n&lt;/div&gt;"},
		{"html comment is text", "<!-- note -->", "&lt;!-- note --&gt;"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n──────────\n\nb"},
		{"tight bullet list", "- a\n- b\n* c", "• a\n• b\n\n• c"},
		{"ordered list keeps start", "3. c\n4. d", "3. c\n4. d"},
		{"ordered list with paren", "1) a\n2) b", "1. a\n2. b"},
		{"nested list indents", "- a\n  - b\n    - c\n      - d\n        - e", "• a\n   ◦ b\n      ▪ c\n         ▫ d\n            • e"},
		{"loose list", "- a\n\n- b", "• a\n\n• b"},
		{"list item with two paragraphs", "1. a\n\n   more\n2. b", "1. a\n\n   more\n\n2. b"},
		{"list item with code block", "- run:\n  ```sh\n  make\n  ```", "• run:\n<pre><code class=\"language-sh\">make</code></pre>"},
		{"list item starting with code block", "- ```\n  x\n  ```", "•\n<pre>x</pre>"},
		{"empty list item", "- \n- b", "•\n• b"},
		{"list right after list marker", "- - a", "• ◦ a"},
		{"task list", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"ordered task list", "1. [x] done", "1. ☑ done"},
		{"blockquote", "> quoted *text*\n> more", "<blockquote>quoted <i>text</i>\nmore</blockquote>"},
		{"blockquote paragraphs", "> a\n>\n> b", "<blockquote>a\n\nb</blockquote>"},
		{"nested blockquote is flattened", "> a\n> > b", "<blockquote>a\n\nb</blockquote>"},
		{"code block in blockquote", "> ```\n> x\n> ```", "<blockquote><pre>x</pre></blockquote>"},
		{"blocks around blockquote", "a\n\n> q\n\nb", "a\n\n<blockquote>q</blockquote>\n\nb"},
		{"empty blockquote", ">", "<blockquote></blockquote>"},
		{"table", "| a | bb |\n|---|---:|\n| 1 | 2 |", "<pre>a | bb\n--+---\n1 |  2</pre>"},
		{"table cell markup is flattened", "| *x* | `y<z` |\n|---|---|\n| [l](https://x.com) | a \\| b |", "<pre>x | y&lt;z\n--+------\nl | a | b</pre>"},
		{"table with wide characters", "| k | v |\n|:-:|---|\n| 中 | a |", "<pre>k  | v\n---+--\n中 | a</pre>"},
		{"emoji and cjk pass through", "**你好** 👋🏽 世界", "<b>你好</b> 👋🏽 世界"},
		{"invalid utf-8 is replaced", "a\xffb", "a\uFFFDb"},
		{"nul is replaced", "a\x00b", "a\uFFFDb"},
		{"crlf line endings", "a\r\nb\r\n\r\n```\r\nc\r\n```", "a\nb\n\n<pre>c</pre>"},
		{"link reference", "[x][1]\n\n[1]: https://x.com", `<a href="https://x.com">x</a>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.MarkdownToHTML(tt.md)
			assert.Equal(t, tt.want, got)
			assert.NoError(t, validateTelegramHTML(got))
		})
	}
}

// TestMarkdownToHTMLConcurrent checks that the shared parser is safe to use
// from many goroutines (run with -race).
func TestMarkdownToHTMLConcurrent(t *testing.T) {
	md := readGolden(t, "long_answer.md")
	want := render.MarkdownToHTML(md)
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Go(func() { results[i] = render.MarkdownToHTML(md) })
	}
	wg.Wait()
	for _, got := range results {
		assert.Equal(t, want, got)
	}
}

// TestGolden renders every testdata/render/markdown/*.md file and compares
// the HTML, and the SafeChunkLimit split when there is more than one chunk,
// with the golden files. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		base := strings.TrimSuffix(in, ".md")
		t.Run(filepath.Base(base), func(t *testing.T) {
			src, err := os.ReadFile(in)
			require.NoError(t, err)
			got := render.MarkdownToHTML(string(src))
			require.NoError(t, validateTelegramHTML(got))
			checkGolden(t, base+".golden.html", got)

			chunks := render.SplitHTML(got, render.SafeChunkLimit)
			checkChunks(t, got, chunks, render.SafeChunkLimit)
			chunkFile := base + ".chunks.golden.html"
			if len(chunks) > 1 {
				checkGolden(t, chunkFile, formatChunks(chunks))
			} else if *update {
				_ = os.Remove(chunkFile)
			} else {
				assert.NoFileExists(t, chunkFile, "stale chunk golden; run with -update")
			}
		})
	}
}

// TestGoldenLongAnswer pins the properties the long answer exists to show:
// it needs several messages, and its code block, longer than one message,
// continues with the same language class in the next chunk.
func TestGoldenLongAnswer(t *testing.T) {
	md := readGolden(t, "long_answer.md")
	require.Greater(t, len(md), 11000)
	chunks := render.MarkdownChunks(md, render.SafeChunkLimit)
	require.GreaterOrEqual(t, len(chunks), 3)
	checkChunks(t, render.MarkdownToHTML(md), chunks, render.SafeChunkLimit)

	continued := 0
	for i, c := range chunks[1:] {
		if strings.HasPrefix(c, `<pre><code class="language-go">`) {
			continued++
			assert.True(t, strings.HasSuffix(chunks[i], "</code></pre>"), "chunk %d must close the code block it leaves open", i+1)
		}
	}
	assert.GreaterOrEqual(t, continued, 1, "the long Go block must continue into the next chunk")
}

func readGolden(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	require.NoError(t, err)
	return string(b)
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./internal/render -update")
	assert.Equal(t, string(want), got)
}

// formatChunks lays chunks out in one file, with a header line per chunk
// recording its visible length.
func formatChunks(chunks []string) string {
	var b strings.Builder
	for i, c := range chunks {
		fmt.Fprintf(&b, "<!-- chunk %d/%d: %d visible UTF-16 units -->\n%s\n", i+1, len(chunks), render.VisibleLen(c), c)
	}
	return b.String()
}

// checkChunks asserts the splitting contract: each chunk is valid Telegram
// HTML within the limit with some visible text, and together the chunks
// show all the non-whitespace text of the whole.
func checkChunks(t *testing.T, whole string, chunks []string, limit int) {
	t.Helper()
	var plain strings.Builder
	for i, c := range chunks {
		assert.LessOrEqual(t, render.VisibleLen(c), limit, "chunk %d", i)
		assert.NoError(t, validateTelegramHTML(c), "chunk %d: %s", i, c)
		assert.NotEmpty(t, strings.TrimSpace(render.HTMLToPlain(c)), "chunk %d is blank", i)
		plain.WriteString(render.HTMLToPlain(c))
	}
	assert.Equal(t, stripSpace(render.HTMLToPlain(whole)), stripSpace(plain.String()))
}

func stripSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// FuzzMarkdown checks the renderer's and splitter's invariants on arbitrary
// input. Its seeds (the golden inputs and some nasty cases) also run as a
// normal test.
func FuzzMarkdown(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.md"))
	require.NoError(f, err)
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		require.NoError(f, err)
		f.Add(string(b))
	}
	for _, s := range []string{
		"", "<", "&", "&amp", "&#0;", "&#xD800;", "`", "```", "~~~\n<x>", "\\", "[", "[a](<b>)", "**`x`**",
		"> > > > deep\n> > > > quote", "- - - - - -\n", "|a|\n|-|\n|<>|", "![[a](https://x.com)](https://y.com)",
		"[a](https://x.com \"t&<>\")", "<https://x.com?a=\"b\">", "***a `b` c***", "~~a **b `c` d** e~~",
		"😀😀😀😀😀😀😀😀\n\n👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "a\u0301\u0301\u0301b", "\x00\xff\xfe", "1. a\n   > b\n   > ```\n   > c\n   > ```",
		strings.Repeat("word ", 300), strings.Repeat("x", 500), strings.Repeat("- a\n  ", 40) + "- b",
		strings.Repeat("```go\n"+strings.Repeat("a<b&c\n", 40)+"```\n\n", 3),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		html := render.MarkdownToHTML(md)
		if err := validateTelegramHTML(html); err != nil {
			t.Fatalf("invalid HTML: %v\ninput: %q\noutput: %q", err, md, html)
		}
		for _, limit := range []int{2, 7, 64, render.SafeChunkLimit} {
			checkChunks(t, html, render.SplitHTML(html, limit), limit)
		}
	})
}

func BenchmarkMarkdownToHTML12k(b *testing.B) {
	md := readGolden(b, "long_answer.md")
	b.SetBytes(int64(len(md)))
	b.ReportAllocs()
	for b.Loop() {
		chunks := render.SplitHTML(render.MarkdownToHTML(md), render.SafeChunkLimit)
		if len(chunks) < 2 {
			b.Fatal("expected several chunks")
		}
	}
}

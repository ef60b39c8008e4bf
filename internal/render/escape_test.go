package render_test

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
)

func TestEscapeHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{`<b>&"x"'y'</b>`, "&lt;b&gt;&amp;&quot;x&quot;'y'&lt;/b&gt;"},
		{"&amp;", "&amp;amp;"},
		{"emoji 😀 中文", "emoji 😀 中文"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render.EscapeHTML(tt.in), tt.in)
		assert.Equal(t, tt.in, render.HTMLToPlain(render.EscapeHTML(tt.in)), "round trip %q", tt.in)
	}
}

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"中文", 2},
		{"😀", 2},
		{"👨‍👩‍👧‍👦", 11},
		{"🇯🇵", 4},
		{"𝄞", 2},
		{"\xff", 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render.UTF16Len(tt.in), tt.in)
		if tt.in != "\xff" {
			assert.Len(t, utf16.Encode([]rune(tt.in)), tt.want, "cross-check %q", tt.in)
		}
	}
}

func TestVisibleLenAndHTMLToPlain(t *testing.T) {
	tests := []struct {
		name, html, plain string
	}{
		{"empty", "", ""},
		{"tags are not counted", `<b>a</b><a href="https://x.com/long">b</a>`, "ab"},
		{"telegram's named entities", "&lt;&gt;&amp;&quot;", `<>&"`},
		{"numeric entities", "&#65;&#x1F600;", "A😀"},
		{"unknown entities are literal", "&nbsp;&copy;", "&nbsp;&copy;"},
		{"invalid numeric entities are literal", "&#0;&#xD800;&#x110000;", "&#0;&#xD800;&#x110000;"},
		{"bare ampersand and brackets", "a & b < c > d", "a & b < c > d"},
		{"pre with language", "<pre><code class=\"language-go\">x &lt; y</code></pre>", "x < y"},
		{"newlines are visible", "a\n\n<b>b</b>", "a\n\nb"},
		{"emoji", "<i>😀</i>", "😀"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.plain, render.HTMLToPlain(tt.html))
			assert.Equal(t, render.UTF16Len(tt.plain), render.VisibleLen(tt.html))
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 5, "hello"},
		{"cuts with ellipsis", "hello world", 8, "hello w…"},
		{"drops trailing space before ellipsis", "hello world", 7, "hello…"},
		{"zero", "hello", 0, ""},
		{"negative", "hello", -1, ""},
		{"one unit is just the ellipsis", "hello", 1, "…"},
		{"never splits a surrogate pair", "ab😀cd", 4, "ab…"},
		{"emoji counted as two", "😀😀😀", 5, "😀😀…"},
		{"drops a dangling joiner", "a👩‍💻", 5, "a👩…"},
		{"cjk", "中文字符测试", 4, "中文字…"},
		{"invalid utf-8 stays rune safe", "a\xffbcd", 3, "a\xff…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.Truncate(tt.in, tt.max)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, render.UTF16Len(got), max(tt.max, 0))
			if tt.max > 0 && strings.HasSuffix(got, "…") {
				assert.True(t, strings.HasPrefix(tt.in, strings.TrimSuffix(got, "…")))
			}
		})
	}
}

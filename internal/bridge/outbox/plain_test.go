package outbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/render"
)

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"formatting tags", "<b>bold</b> <i>it</i> <u>u</u> <s>s</s> <tg-spoiler>x</tg-spoiler>", "bold it u s x"},
		{"entities decoded once", "a &lt;b&gt; &amp;amp; &quot;q&quot; &#39;s&#39;", `a <b> &amp; "q" 's'`},
		{"code block keeps content", "<pre><code class=\"language-go\">if a &lt; b {}</code></pre>", "if a < b {}"},
		{"link keeps its target", `see <a href="https://go.dev/?a=1&amp;b=2">docs</a>`, "see docs (https://go.dev/?a=1&b=2)"},
		{"link whose text is the target", `<a href="https://go.dev">https://go.dev</a>`, "https://go.dev"},
		{"unknown tag is text", "a <x> b <how to> c", "a <x> b <how to> c"},
		{"bare less-than is text", "if a<b and c > d", "if a<b and c > d"},
		{"unclosed tag is text", "<b unterminated", "<b unterminated"},
		{"upper-case tags", "<B>x</B>", "x"},
		{"attributes on a plain tag make it text", "<b class=x>y", "<b class=x>y"},
		{"span spoiler", `<span class="tg-spoiler">z</span>`, "z"},
		{"blockquote expandable", "<blockquote expandable>q</blockquote>", "q"},
		{"emoji", `<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, "👍"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, plainText(tt.in))
		})
	}
}

func TestSplitText(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"fits", "hello", 10, []string{"hello"}},
		{"prefers a line break", "aaaa\nbbbb\ncc", 10, []string{"aaaa\nbbbb\n", "cc"}},
		{"then a space", "aaaa bbbb cccc", 10, []string{"aaaa bbbb ", "cccc"}},
		{"hard cut without breaks", "abcdefghijkl", 5, []string{"abcde", "fghij", "kl"}},
		{"ignores an early break", "a\nbcdefghij", 6, []string{"a\nbcde", "fghij"}},
		{"surrogate pairs count two", "😀😀😀", 4, []string{"😀😀", "😀"}},
		{"never splits a pair", "a😀b", 2, []string{"a", "😀", "b"}},
		{"blank chunks dropped", "aaaa\n\n\n\n\n\n\n\nbb", 5, []string{"aaaa\n", "\n\nbb"}},
		{"empty", "", 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitText(tt.in, tt.limit)
			assert.Equal(t, tt.want, got)
			for _, c := range got {
				assert.LessOrEqual(t, render.UTF16Len(c), tt.limit)
			}
		})
	}
}

func TestSplitTextKeepsEverything(t *testing.T) {
	in := strings.Repeat("word ", 3000) + strings.Repeat("x", 9000)
	var b strings.Builder
	for _, c := range splitText(in, DefaultSplitLimit) {
		assert.LessOrEqual(t, render.UTF16Len(c), DefaultSplitLimit)
		b.WriteString(c)
	}
	assert.Equal(t, in, b.String())
}

package telegramtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHTML(t *testing.T) {
	cases := []struct {
		name, in string
		text     string
		ents     []Entity
		err      string // exact parseError message when non-empty
	}{
		{name: "bold", in: "<b>bold</b> x", text: "bold x", ents: []Entity{{Type: "bold", Length: 4}}},
		{name: "all aliases", in: "<strong>a</strong><em>b</em><ins>c</ins><strike>d</strike><del>e</del><tg-spoiler>f</tg-spoiler>",
			text: "abcdef", ents: []Entity{{Type: "bold", Offset: 0, Length: 1}, {Type: "italic", Offset: 1, Length: 1},
				{Type: "underline", Offset: 2, Length: 1}, {Type: "strikethrough", Offset: 3, Length: 1},
				{Type: "strikethrough", Offset: 4, Length: 1}, {Type: "spoiler", Offset: 5, Length: 1}}},
		{name: "upper-case tags", in: "<B>x</B>", text: "x", ents: []Entity{{Type: "bold", Length: 1}}},
		{name: "entities decoded", in: "a &lt;b&gt; &amp; &quot;q&quot; &#39;x&#x27; &#128512;", text: `a <b> & "q" 'x' 😀`},
		{name: "nested outer first", in: "<b>a<i>b</i></b>", text: "ab", ents: []Entity{{Type: "bold", Length: 2}, {Type: "italic", Offset: 1, Length: 1}}},
		{name: "utf16 offsets", in: "😀é<b>x</b>", text: "😀éx", ents: []Entity{{Type: "bold", Offset: 3, Length: 1}}},
		{name: "pre with language", in: "<pre><code class=\"language-go\">x := 1</code></pre>", text: "x := 1", ents: []Entity{{Type: "pre", Length: 6, Language: "go"}}},
		{name: "code alone", in: "run <code>ls</code>", text: "run ls", ents: []Entity{{Type: "code", Offset: 4, Length: 2}}},
		{name: "nothing nests in code", in: "<code>a<b>b</b></code>", text: "ab", ents: []Entity{{Type: "code", Length: 2}}},
		{name: "link with entity in href", in: `<a href="https://e.x/?a=1&amp;b=2">l</a>`, text: "l", ents: []Entity{{Type: "text_link", Length: 1, URL: "https://e.x/?a=1&b=2"}}},
		{name: "unquoted attribute", in: "<a href=x>y</a>", text: "y", ents: []Entity{{Type: "text_link", Length: 1, URL: "x"}}},
		{name: "spoiler span", in: `<span class="tg-spoiler">s</span>`, text: "s", ents: []Entity{{Type: "spoiler", Length: 1}}},
		{name: "expandable blockquote", in: "<blockquote expandable>q</blockquote>", text: "q", ents: []Entity{{Type: "expandable_blockquote", Length: 1}}},
		{name: "empty entity dropped", in: "<b></b>x", text: "x"},
		{name: "surrounding whitespace trimmed", in: "  \n<b> x </b>\n ", text: "x", ents: []Entity{{Type: "bold", Length: 1}}},
		{name: "bare > is text", in: "a > b", text: "a > b"},
		{name: "unknown tag", in: "<foo>", err: `Unsupported start tag "foo" at byte offset 0`},
		{name: "offsets are bytes", in: "é<foo>", err: `Unsupported start tag "foo" at byte offset 2`},
		{name: "bare < is a start tag", in: "x < y", err: `Unsupported start tag "" at byte offset 2`},
		{name: "unclosed", in: "<b>x", err: `Can't find end tag corresponding to start tag "b"`},
		{name: "misnested", in: "<b><i>x</b></i>", err: `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
		{name: "stray end tag", in: "x</b>", err: "Unexpected end tag at byte offset 1"},
		{name: "span without class", in: "<span>x</span>", err: `Tag "span" must have class "tg-spoiler" at byte offset 0`},
		{name: "unterminated start tag", in: "a <b", err: "Unclosed start tag at byte offset 2"},
		{name: "strict ampersand", in: "a & b", err: `bare "&" at byte offset 2 must be written as "&amp;" (telegramtest strict mode)`},
		{name: "unknown named entity is bare &", in: "&nbsp;", err: `bare "&" at byte offset 0 must be written as "&amp;" (telegramtest strict mode)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, ents, err := parseText(tc.in, "HTML", true)
			if tc.err != "" {
				var pe *parseError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tc.err, pe.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.text, text)
			assert.Equal(t, tc.ents, nilIfEmpty(ents))
		})
	}
}

func nilIfEmpty(es []Entity) []Entity {
	if len(es) == 0 {
		return nil
	}
	return es
}

func TestLenientAmpersandKeepsIt(t *testing.T) {
	text, _, err := parseText("a & b &nbsp;", "HTML", false)
	require.NoError(t, err)
	assert.Equal(t, "a & b &nbsp;", text)
}

func TestParseMarkdown(t *testing.T) {
	cases := []struct {
		name, mode, in string
		text           string
		ents           []Entity
		err            string
	}{
		{name: "v2 styles", mode: "MarkdownV2", in: "*b* _i_ __u__ ~s~ ||p|| `c`", text: "b i u s p c", ents: []Entity{
			{Type: "bold", Offset: 0, Length: 1}, {Type: "italic", Offset: 2, Length: 1}, {Type: "underline", Offset: 4, Length: 1},
			{Type: "strikethrough", Offset: 6, Length: 1}, {Type: "spoiler", Offset: 8, Length: 1}, {Type: "code", Offset: 10, Length: 1}}},
		{name: "v2 escapes", mode: "MarkdownV2", in: `v1\.2 \(x\) a\\b`, text: `v1.2 (x) a\b`},
		{name: "v2 link", mode: "MarkdownV2", in: "[t](http://x/\\))", text: "t", ents: []Entity{{Type: "text_link", Length: 1, URL: "http://x/)"}}},
		{name: "v2 pre language", mode: "MarkdownV2", in: "```go\nx.y()```", text: "x.y()", ents: []Entity{{Type: "pre", Length: 5, Language: "go"}}},
		{name: "v2 reserved", mode: "MarkdownV2", in: "a-b", err: `Character '-' is reserved and must be escaped with the preceding '\'`},
		{name: "v2 unclosed", mode: "MarkdownV2", in: "x *bold", err: "Can't find end of Bold entity at byte offset 2"},
		{name: "legacy allows dots", mode: "Markdown", in: "*v1.2* done.", text: "v1.2 done.", ents: []Entity{{Type: "bold", Length: 4}}},
		{name: "legacy unclosed", mode: "Markdown", in: "_x", err: "Can't find end of the entity starting at byte offset 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, ents, err := parseText(tc.in, tc.mode, true)
			if tc.err != "" {
				var pe *parseError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tc.err, pe.msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.text, text)
			assert.Equal(t, tc.ents, nilIfEmpty(ents))
		})
	}
}

func TestParseModeValidation(t *testing.T) {
	_, _, err := parseText("x", "html5", true)
	assert.ErrorIs(t, err, errBadParseMode)
	text, ents, err := parseText("<b>x</b>", "", true)
	require.NoError(t, err)
	assert.Equal(t, "<b>x</b>", text, "without parse_mode tags are text")
	assert.Empty(t, ents)
}

func TestEntityCap(t *testing.T) {
	in := ""
	for range 150 {
		in += "<b>x</b> "
	}
	_, ents, err := parseText(in, "HTML", true)
	require.NoError(t, err)
	assert.Len(t, ents, maxEntities)
}

func TestCommandEntities(t *testing.T) {
	cases := []struct {
		in   string
		want []Entity
	}{
		{"/start", []Entity{{Type: "bot_command", Length: 6}}},
		{"héllo /cmd x", []Entity{{Type: "bot_command", Offset: 6, Length: 4}}},
		{"😀 /go@bot", []Entity{{Type: "bot_command", Offset: 3, Length: 7}}},
		{"/a /b", []Entity{{Type: "bot_command", Length: 2}, {Type: "bot_command", Offset: 3, Length: 2}}},
		{"a/b and / alone", nil},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, commandEntities(tc.in), tc.in)
	}
}

func TestUTF16Len(t *testing.T) {
	assert.Equal(t, 0, utf16Len(""))
	assert.Equal(t, 3, utf16Len("aé€"))
	assert.Equal(t, 2, utf16Len("😀"))
}

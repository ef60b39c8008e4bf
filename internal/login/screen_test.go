package login

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The testdata/*.raw files are the real CLI's bytes (2.1.328, under a
// 500-column pseudo-terminal, offline): what `claude auth login` and
// `claude setup-token` print before the code, and after the made-up code
// "fake-code-0123456789#fake-state-abcdef" failed for want of a network.

func readRaw(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// feed writes b in pieces of n bytes (n < 1: whole), so escape sequences
// split across reads are exercised.
func feed(b []byte, n int) *screen {
	var sc screen
	if n < 1 {
		sc.write(b)
		return &sc
	}
	for i := 0; i < len(b); i += n {
		sc.write(b[i:min(i+n, len(b))])
	}
	return &sc
}

func TestScreenRealCLI(t *testing.T) {
	cases := []struct {
		file       string
		wantURL    []string // substrings of the URL
		wantLines  []string // lines that must be there
		wantPrompt bool
		wantRetry  bool
	}{
		{file: "auth-login.before.raw",
			wantURL:    []string{"https://claude.com/cai/oauth/authorize?code=true&client_id=", "redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback", "&state="},
			wantLines:  []string{"Opening browser to sign in…", "Paste code here if prompted >"},
			wantPrompt: true},
		{file: "auth-login.after.raw",
			wantLines: []string{"fake-code-0123456789#fake-state-abcdef", "Signing in…", "Couldn't log in: getaddrinfo EAI_AGAIN platform.claude.com"}},
		{file: "setup-token.before.raw",
			wantURL:    []string{"https://claude.com/cai/oauth/authorize?code=true&client_id=", "scope=user%3Ainference", "&state="},
			wantLines:  []string{"Welcome to Claude Code v2.1.328", "Browser didn't open? Use the URL below to sign in (c to copy)", "Paste code here if prompted"},
			wantPrompt: true},
		{file: "setup-token.after.raw",
			wantLines: []string{"✘ OAuth error: Couldn't get an answer from the sign-in service (EAI_AGAIN). Check your internet connection, then try again.", "Press Enter to retry"},
			wantRetry: true},
	}
	for _, tc := range cases {
		raw := readRaw(t, tc.file)
		for _, piece := range []int{0, 1, 7} {
			sc := feed(raw, piece)
			lines := sc.lines()
			u := sc.authURL()
			if tc.wantURL == nil {
				assert.Empty(t, u, "%s: no URL", tc.file)
			}
			for _, want := range tc.wantURL {
				assert.Contains(t, u, want, "%s in pieces of %d", tc.file, piece)
			}
			for _, want := range tc.wantLines {
				assert.Contains(t, lines, want, "%s in pieces of %d", tc.file, piece)
			}
			joined := strings.Join(lines, "\n")
			assert.NotContains(t, joined, "\x1b", "%s: no escape survives", tc.file)
			assert.Equal(t, tc.wantPrompt, promptRe.MatchString(joined), "%s: prompt", tc.file)
			assert.Equal(t, tc.wantRetry, retryRe.MatchString(joined), "%s: retry screen", tc.file)
		}
	}
}

// TestScreenWideTerminal: on the 500 columns Start gives it, setup-token
// shows its URL on one line, whole (at 80 it cuts it into lines, each piece
// a hyperlink to the whole, which TestSetupToken's fake mimics).
func TestScreenWideTerminal(t *testing.T) {
	sc := feed(readRaw(t, "setup-token.before.raw"), 0)
	var visible []string
	for _, l := range sc.lines() {
		if strings.Contains(l, "https://") {
			visible = append(visible, l)
		}
	}
	assert.Equal(t, []string{sc.authURL()}, visible)
}

func TestScreenSequences(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain\r\nline", "plain\nline"},
		{"\x1b[1mbold\x1b[22m \x1b[38;5;246mgrey\x1b[39m", "bold grey"},
		{"Paste\x1b[8Gcode\x1b[13Ghere", "Paste code here"},
		{"up\x1b[2Adown", "up\ndown"},
		{"\x1b]8;id=1;https://a.example/x\x07link\x1b]8;;\x07 after", "link after"},
		{"\x1b]8;;https://a.example/y\x1b\\st-terminated\x1b]8;;\x1b\\", "st-terminated"},
		{"\x1b]11;?\x07\x1b[c\x1b[>0q\x1b[?u\x1bPdcs\x1b\\text", "text"},
		{"\x1b7\x1b8\x1b(Bsaved\x0f\x07", "saved"},
		{"tab\there", "tab here"},
	}
	for _, tc := range cases {
		for _, piece := range []int{0, 1, 2, 3} {
			got := strings.Join(feed([]byte(tc.in), piece).lines(), "\n")
			assert.Equal(t, tc.want, got, "%q in pieces of %d", tc.in, piece)
		}
	}
	sc := feed([]byte("\x1b]8;;https://a.example/y\x07y\x1b]8;;\x07 and https://b.example/z."), 0)
	assert.Equal(t, "https://a.example/y", sc.authURL(), "a hyperlink wins over text")
	sc = feed([]byte("visit: https://b.example/z?x=1. Then"), 0)
	assert.Equal(t, "https://b.example/z?x=1", sc.authURL(), "trailing punctuation is not part of it")
	sc = feed([]byte("http://insecure.example/ and https://user:pw@b.example/"), 0)
	assert.Empty(t, sc.authURL(), "only https, without user info")
}

// TestScreenBounded: a program that never ends an escape sequence, or
// writes without end, costs bounded memory.
func TestScreenBounded(t *testing.T) {
	var sc screen
	sc.write([]byte("\x1b]8;;"))
	for range 100 {
		sc.write([]byte(strings.Repeat("a", 4096)))
	}
	assert.LessOrEqual(t, len(sc.pending), maxPending)
	sc = screen{}
	for range 200 {
		sc.write([]byte(strings.Repeat("line of output\n", 200)))
	}
	assert.LessOrEqual(t, len(sc.text), maxText)
	sc.setMark()
	sc.write([]byte("after the mark\n"))
	assert.Equal(t, []string{"after the mark"}, sc.since())
}

func TestRedact(t *testing.T) {
	var r redactor
	r.add("pasted-code-1234#state-5678")
	cases := []struct{ in, want string }{
		{"echo: pasted-code-1234#state-5678", "echo: " + Redacted},
		{"only the code: pasted-code-1234", "only the code: " + Redacted},
		{"only the state: state-5678", "only the state: " + Redacted},
		{"key sk-ant-api03-abcdEFGH1234_-xyz in text", "key " + Redacted + " in text"},
		{"token sk-ant-oat01-abcdefghijklmnop", "token " + Redacted},
		{"opaque 0123456789abcdefghijklmnopqrstuvwxyzABCD end", "opaque " + Redacted + " end"},
		{"Couldn't log in: getaddrinfo EAI_AGAIN platform.claude.com", "Couldn't log in: getaddrinfo EAI_AGAIN platform.claude.com"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, r.redact(tc.in), tc.in)
	}
}

package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type seen struct {
	at   int64
	line string
}

func scanString(t *testing.T, content string, start, budget int64, align bool) ([]seen, span) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	var got []seen
	sp, err := scan(f, start, int64(len(content)), budget, align, func(at int64, line []byte) error {
		got = append(got, seen{at, string(line)})
		return nil
	})
	require.NoError(t, err)
	return got, sp
}

func TestScan(t *testing.T) {
	long := strings.Repeat("x", maxLine+1)
	tests := []struct {
		name    string
		content string
		start   int64
		budget  int64
		align   bool
		want    []seen
		end     int64
		trunc   bool
		skipped int
	}{
		{name: "complete lines", content: "a\nbb\n", want: []seen{{0, "a"}, {2, "bb"}}, end: 5},
		{name: "partial last line left unread", content: "a\nbb", want: []seen{{0, "a"}}, end: 2},
		{name: "nothing complete", content: "abc", end: 0},
		{name: "empty", content: "", end: 0},
		{name: "empty lines pass", content: "\n\na\n", want: []seen{{0, ""}, {1, ""}, {2, "a"}}, end: 4},
		{name: "align skips a cut line", content: "abc\nde\n", start: 2, align: true, want: []seen{{4, "de"}}, end: 7},
		{name: "align at a line start keeps it", content: "abc\nde\n", start: 4, align: true, want: []seen{{4, "de"}}, end: 7},
		{name: "budget cuts at a line", content: "aa\nbb\ncc\n", budget: 7, want: []seen{{0, "aa"}, {3, "bb"}}, end: 6, trunc: true},
		{name: "over-long line skipped, offsets kept", content: "a\n" + long + "\nb\n", want: []seen{{0, "a"}, {int64(3 + len(long)), "b"}}, end: int64(len(long) + 5), skipped: 1},
		{name: "a line of exactly maxLine is kept", content: long[1:] + "\n", want: []seen{{0, long[1:]}}, end: int64(len(long))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sp := scanString(t, tt.content, tt.start, tt.budget, tt.align)
			assert.Equal(t, len(tt.want), len(got))
			for i := range min(len(got), len(tt.want)) {
				assert.Equal(t, tt.want[i].at, got[i].at, "line %d offset", i)
				assert.True(t, tt.want[i].line == got[i].line, "line %d: %.40q", i, got[i].line)
			}
			assert.Equal(t, tt.end, sp.end, "end")
			assert.Equal(t, tt.trunc, sp.truncated, "truncated")
			assert.Equal(t, tt.skipped, sp.skipped, "skipped")
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  many   spaces\n\nand lines ", 100, "many spaces and lines"},
		{"abcdef", 4, "abc…"},
		{"日本語のテキスト", 3, "日本…"},
		{"abcd", 4, "abcd"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, clip(tt.in, tt.n), "%q", tt.in)
	}
}

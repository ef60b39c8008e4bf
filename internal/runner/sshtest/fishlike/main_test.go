package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseLikeFish: the expectations are what fish 3.6.0 makes of each
// line (checked with `fish -c "printf '[%s]\n' <line>"`).
func TestParseLikeFish(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{`a b  c`, [][]string{{"a", "b", "c"}}},
		{`'it'\''s'`, [][]string{{"it's"}}},
		{`'a\'b'`, [][]string{{"a'b"}}},
		{`'a\\b'`, [][]string{{`a\b`}}},
		{`'a\b'`, [][]string{{`a\b`}}},
		{`'x\'\'';touch /tmp/p;#'`, [][]string{{"x''"}, {"touch", "/tmp/p"}}},
		{`"a\"b\\c\$d"`, [][]string{{`a"b\c$d`}}},
		{`a\ b\;c`, [][]string{{"a b;c"}}},
		{"a\\nb", [][]string{{"a\nb"}}},
		{"a;b\nc # d e\nf", [][]string{{"a"}, {"b"}, {"c"}, {"f"}}},
		{`a#b`, [][]string{{"a#b"}}},
		{`'multi` + "\n" + `line' x`, [][]string{{"multi\nline", "x"}}},
		{`a'b'"c"d`, [][]string{{"abcd"}}},
		{`'' x`, [][]string{{"", "x"}}},
		{`sh -c 'echo "$HOME" ${x%.} $(y) & z; w' untether`, [][]string{{"sh", "-c", `echo "$HOME" ${x%.} $(y) & z; w`, "untether"}}},
		{`[1m] a=b @c:d,e+f%g !h`, [][]string{{"[1m]", "a=b", "@c:d,e+f%g", "!h"}}},
	} {
		got, err := parse(tc.line)
		require.NoError(t, err, tc.line)
		var argvs [][]string
		for _, c := range got {
			require.NoError(t, c.err, tc.line)
			argvs = append(argvs, c.argv)
		}
		assert.Equal(t, tc.want, argvs, tc.line)
	}
	// What fishlike does not implement keeps its command from running;
	// the other commands of the line run.
	for _, line := range []string{`$HOME`, `a*`, `(x)`, `a | b`, `a > b`, `~/x`, `{a,b}`, `"$x"`} {
		got, err := parse("x " + line + "; touch y")
		require.NoError(t, err, line)
		require.Len(t, got, 2, line)
		assert.Error(t, got[0].err, "not implemented, so not run: %s", line)
		assert.NoError(t, got[1].err)
		assert.Equal(t, []string{"touch", "y"}, got[1].argv)
	}
	got, err := parse(`"\$x"`)
	require.NoError(t, err)
	assert.Equal(t, []command{{argv: []string{"$x"}}}, got, "an escaped $ is a $")
	for _, line := range []string{`'open`, `"open`, `a\`} {
		_, err := parse(line)
		assert.Error(t, err, "a syntax error runs nothing: %s", line)
	}
}

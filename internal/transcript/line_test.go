package transcript

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSinceTellsTheLine: which turns appended after a mark are on the line
// a resume goes on from. Each fixture in testdata/line is appended to
// base.jsonl (the phone's first turn, p1), as the CLI 2.1.328 links its
// entries (uuid, parentUuid, null for a compaction's boundary with
// logicalParentUuid); the phone's own prompts are p1 and p2. The real CLI
// makes forked.jsonl's shape when a terminal resumes the session while the
// phone's CLI is busy with p2 (TestRealCLIForkWhileBusy), and resumes from
// the branch written last.
func TestSinceTellsTheLine(t *testing.T) {
	own := func(u string) bool { return u == "p1" || u == "p2" }
	for _, tc := range []struct {
		file           string
		onLine, forked []string // the foreign turns' texts
	}{
		{file: "linear.jsonl", onLine: []string{"TERMINAL at the desk"}},
		{file: "forked.jsonl", forked: []string{"TERMINAL meanwhile"}},
		{file: "forked-terminal-last.jsonl", onLine: []string{"TERMINAL meanwhile"}},
		{file: "both.jsonl", onLine: []string{"TERMINAL at the desk"}, forked: []string{"TERMINAL meanwhile"}},
		{file: "compacted.jsonl", onLine: []string{"TERMINAL before the compaction"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d := sinceFixture(t, tc.file)
			foreign, n := d.Foreign(own)
			var onLine, forked []string
			for _, tu := range foreign {
				if tu.Forked {
					forked = append(forked, tu.Text)
				} else {
					onLine = append(onLine, tu.Text)
				}
			}
			assert.Equal(t, tc.onLine, onLine, "on the line")
			assert.Equal(t, tc.forked, forked, "off it")
			on, off := d.ForeignLine(own, "")
			assert.Equal(t, []int{len(tc.onLine), len(tc.forked)}, []int{on, off})
			assert.Equal(t, n, on+off, "ForeignLine splits Foreign's count")
			assert.Equal(t, len(tc.forked), d.Forked)
		})
	}
}

// TestForeignLineFromTheCallersLeaf: told the last entry of its own CLI,
// which that CLI names as the session's leaf when it exits, ForeignLine
// takes its line while no user or assistant entry follows it, wherever
// the file's last entry is: the terminal's branch written last
// (forked-terminal-last.jsonl), or a later terminal turn on that branch,
// read at a later look (the mark past the phone's answer). Followed (the
// terminal resumed after it), the line is the leaf written last's.
func TestForeignLineFromTheCallersLeaf(t *testing.T) {
	own := func(u string) bool { return u == "p1" || u == "p2" }
	for _, tc := range []struct {
		file, leaf     string
		onLine, forked int
	}{
		{file: "forked-terminal-last.jsonl", leaf: "a2", forked: 1},
		{file: "forked-terminal-last.jsonl", leaf: "", onLine: 1},
		{file: "forked.jsonl", leaf: "a2", forked: 1},
		{file: "linear.jsonl", leaf: "a1", onLine: 1}, // before the mark, and the terminal went on after it
		{file: "linear.jsonl", leaf: "a2", onLine: 1},
		{file: "both.jsonl", leaf: "a2", onLine: 1, forked: 1},
		{file: "forked-terminal-last.jsonl", leaf: "unknown", onLine: 1}, // not read: the leaf written last's line
	} {
		t.Run(tc.file+"/"+tc.leaf, func(t *testing.T) {
			on, off := sinceFixture(t, tc.file).ForeignLine(own, tc.leaf)
			assert.Equal(t, []int{tc.onLine, tc.forked}, []int{on, off})
		})
	}

	// A later look: the mark past the phone's answer a2, then the terminal
	// goes on with its own branch (a resume while the phone's CLI runs
	// takes the leaf the terminal's CLI named). Its turn is not on a2's
	// line; without the leaf it looks like the line written last.
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, lineFixture(t, "base.jsonl")+lineFixture(t, "forked.jsonl"))
	m, err := Stamp(p)
	require.NoError(t, err)
	appendFile(t, p, jsonLine(t, map[string]any{"parentUuid": "ta1", "isSidechain": false, "type": "user", "uuid": "t2",
		"timestamp": "2026-12-02T14:32:00.000Z", "message": map[string]any{"role": "user", "content": "TERMINAL again"},
		"promptSource": "sdk", "turnOrigin": "sdk", "entrypoint": "sdk-cli"}))
	d, _, err := Since(p, m)
	require.NoError(t, err)
	on, off := d.ForeignLine(own, "a2")
	assert.Equal(t, []int{0, 1}, []int{on, off}, "off the line of the phone's answer")
	// No CLI of the caller's runs: the last "last-prompt" decides, the
	// phone's CLI's naming a2 when it exited, so t2 is off the line too.
	on, off = d.ForeignLine(own, "")
	assert.Equal(t, []int{0, 1}, []int{on, off}, "the phone's CLI exited last")

	// The terminal's claude answers and exits after it, naming its answer:
	// a resume goes on from there, with t2.
	appendFile(t, p, jsonLine(t, map[string]any{"parentUuid": "t2", "isSidechain": false, "type": "assistant", "uuid": "ta2",
		"timestamp": "2026-12-02T14:32:01.000Z", "message": map[string]any{"role": "assistant", "content": "ok"}, "entrypoint": "sdk-cli"}))
	appendFile(t, p, jsonLine(t, map[string]any{"type": "last-prompt", "lastPrompt": "x", "leafUuid": "ta2"}))
	d, _, err = Since(p, m)
	require.NoError(t, err)
	on, off = d.ForeignLine(own, "")
	assert.Equal(t, []int{1, 0}, []int{on, off}, "the terminal's claude exited last")
	on, off = d.ForeignLine(own, "a2")
	assert.Equal(t, []int{0, 1}, []int{on, off}, "the phone's CLI, let go of now, exits last")
}

// TestSinceLineWithoutParents: entries that name no parent (older CLIs,
// hand-written files) are taken as one line, each after the one before.
func TestSinceLineWithoutParents(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, sdkPrompt(t, "p1", "one")+answer(t, "a1", "x"))
	m, err := Stamp(p)
	require.NoError(t, err)
	appendFile(t, p, typed(t, "t1", "at the desk")+answer(t, "ta1", "y")+sdkPrompt(t, "p2", "two")+answer(t, "a2", "z"))
	d, _, err := Since(p, m)
	require.NoError(t, err)
	assert.Equal(t, []string{"at the desk", "two"}, texts(d.Turns))
	assert.Zero(t, d.Forked)
}

// TestForeignLine: the split of Foreign's count, also past the turns kept.
func TestForeignLine(t *testing.T) {
	d := Delta{Count: 4, Forked: 2, Turns: []Turn{{UUID: "mine", Forked: true}, {UUID: "theirs"}, {UUID: "aside", Forked: true}, {UUID: "mine2"}}}
	own := func(u string) bool { return u == "mine" || u == "mine2" }
	on, off := d.ForeignLine(own, "")
	assert.Equal(t, []int{1, 1}, []int{on, off})

	d.Count, d.Forked = 10, 5 // 6 not kept, 3 of them forked
	on, off = d.ForeignLine(own, "")
	assert.Equal(t, []int{4, 4}, []int{on, off})
	_, n := d.Foreign(own)
	assert.Equal(t, n, on+off)

	on, off = Delta{}.ForeignLine(own, "a1")
	assert.Equal(t, []int{0, 0}, []int{on, off})
}

// sinceFixture is what Since reads of testdata/line's file appended to
// base.jsonl, from the mark after base.jsonl.
func sinceFixture(t *testing.T, file string) Delta {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, lineFixture(t, "base.jsonl"))
	m, err := Stamp(p)
	require.NoError(t, err)
	appendFile(t, p, lineFixture(t, file))
	d, _, err := Since(p, m)
	require.NoError(t, err)
	return d
}

func lineFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "line", name))
	require.NoError(t, err)
	return string(b)
}

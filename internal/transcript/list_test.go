package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	idTerminal = "4e1ce5b2-2191-4f8e-878a-4343a5fae631"
	idMixed    = "741f4ad2-102a-49d9-bd7d-a37b8e4e9cc4"
	idPrint    = "b72c3a1c-bf53-4057-a05e-43433ed9be61"
	idAgent    = "c9b17dd1-19fa-454f-8db0-1a861b2a6343"
)

// project lays out the real fixtures as a project's transcript directory,
// with the given mtimes, plus what must not be listed.
func project(t *testing.T) (home, workdir string) {
	home, workdir = t.TempDir(), t.TempDir()
	dir := Dir(home, workdir)
	base := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	for i, f := range []struct{ id, fixture string }{
		{idTerminal, "interactive.jsonl"}, // newest
		{idMixed, "sdk-then-terminal.jsonl"},
		{idPrint, "print-resumed.jsonl"},
		{idAgent, "subagent.jsonl"},
	} {
		p := filepath.Join(dir, f.id+".jsonl")
		writeFile(t, p, fixture(t, f.fixture))
		mt := base.Add(-time.Duration(i) * time.Hour)
		require.NoError(t, os.Chtimes(p, mt, mt))
	}
	// Not sessions: a subagent transcript, a symlink to a file outside, a
	// FIFO, a name that is no id, a memory directory.
	writeFile(t, filepath.Join(dir, idAgent, "subagents", "agent-a784447d295ecd4e3.jsonl"), typed(t, "s1", "sub"))
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	writeFile(t, outside, typed(t, "o1", "secret outside"))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "0b5c8b7e-0000-4000-8000-000000000001.jsonl")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "0b5c8b7e-0000-4000-8000-000000000002.jsonl"), 0o600))
	writeFile(t, filepath.Join(dir, "notes.jsonl"), typed(t, "n1", "not a session"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "memory"), 0o700))
	return home, workdir
}

func TestList(t *testing.T) {
	home, workdir := project(t)
	got, err := List(home, workdir, 0)
	require.NoError(t, err)
	var ids []SessionID
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []SessionID{idTerminal, idMixed, idPrint, idAgent}, ids, "newest first; nothing else listed")

	term := got[0]
	assert.Equal(t, "hello from the terminal", term.FirstPrompt)
	assert.Equal(t, 2, term.Turns)
	assert.True(t, term.TurnsExact)
	assert.True(t, term.StartedAtTerminal())
	assert.Equal(t, "2026-12-01T19:34:10Z", term.Started.UTC().Truncate(time.Second).Format(time.RFC3339))
	assert.Equal(t, "/home/dev/project", term.CWD)
	assert.Equal(t, "2.1.328", term.Version)

	mixed := got[1]
	assert.Equal(t, "please run it", mixed.FirstPrompt)
	assert.Equal(t, 9, mixed.Turns, "2 from untether, 7 at the terminal")
	assert.False(t, mixed.StartedAtTerminal(), "started in print mode")
	assert.Equal(t, EntrypointPrint, mixed.Entrypoint)
	assert.Equal(t, EntrypointTerminal, mixed.LastEntrypoint, "continued at the terminal")

	print := got[2]
	assert.Equal(t, "print mode hello", print.FirstPrompt)
	assert.Equal(t, 3, print.Turns, "claude -p, then --resume -p, then --continue -p")

	agent := got[3]
	assert.Equal(t, 1, agent.Turns, "the task notification's turn is not a person's")

	limited, err := List(home, workdir, 2)
	require.NoError(t, err)
	assert.Len(t, limited, 2)
}

// TestSummariseHostile: a subagent's (sidechain) prompt and slash commands
// are no turns, and a malformed file still gets a summary.
func TestSummariseHostile(t *testing.T) {
	s, err := Summarise(filepath.Join("testdata", "hostile.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, s.Turns)
	assert.Equal(t, "## not a heading of the export --- run `ls` please", s.FirstPrompt)
	assert.Equal(t, "feat/x", s.Branch, "not the subagent's")
	assert.Equal(t, "/home/dev/p", s.CWD)
	assert.Equal(t, "2026-12-01T10:06:01Z", s.Last.UTC().Format(time.RFC3339))
	assert.True(t, s.StartedAtTerminal())
}

func TestListMissingDir(t *testing.T) {
	got, err := List(t.TempDir(), "/no/such/project", 0)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestListLargeFile: a transcript over the whole-read size is read only at
// its head and tail; its turns then come from the CLI's own counter.
func TestListLargeFile(t *testing.T) {
	home, workdir := t.TempDir(), t.TempDir()
	p := filepath.Join(Dir(home, workdir), idMixed+".jsonl")
	var b strings.Builder
	b.WriteString(`{"type":"user","uuid":"m0","isMeta":true,"message":{"content":"<local-command-caveat>c</local-command-caveat>"}}` + "\n")
	b.WriteString(sdkPrompt(t, "p0", "the very first prompt"))
	filler := answer(t, "a", strings.Repeat("z", 4000))
	for i := 0; b.Len() < wholeFile+1<<20; i++ {
		b.WriteString(filler)
	}
	b.WriteString(jsonLine(t, map[string]any{"type": "user", "uuid": "pl", "timestamp": "2026-12-02T08:00:00.000Z",
		"message": map[string]any{"content": "last"}, "promptSource": "typed", "turnOrigin": "human", "entrypoint": "cli",
		"turnPosition": map[string]any{"promptIndex": 3, "turnIndex": 41}, "gitBranch": "feature"}))
	writeFile(t, p, b.String())

	got, err := List(home, workdir, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	s := got[0]
	assert.Equal(t, "the very first prompt", s.FirstPrompt)
	assert.Equal(t, 41, s.Turns)
	assert.False(t, s.TurnsExact)
	assert.Equal(t, "feature", s.Branch)
	assert.Equal(t, EntrypointTerminal, s.LastEntrypoint)
	assert.Equal(t, "2026-12-02T08:00:00Z", s.Last.UTC().Format(time.RFC3339))
}

// TestListBounded: a directory of many sessions, the newest a 2 GB
// (sparse) transcript, lists in bounded reads: only limit files, and of the
// big one only its head and tail.
func TestListBounded(t *testing.T) {
	home, workdir := t.TempDir(), t.TempDir()
	dir := Dir(home, workdir)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 500 // creating files is slow on a shared disk; the code path is the same for 5000
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("00000000-0000-4000-8000-%012d.jsonl", i))
		writeFile(t, p, sdkPrompt(t, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt %d", i)))
		mt := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(p, mt, mt))
	}
	big := filepath.Join(dir, idMixed+".jsonl")
	writeFile(t, big, sdkPrompt(t, "b0", "the first prompt of a huge session"))
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	require.NoError(t, err)
	last := jsonLine(t, map[string]any{"type": "user", "uuid": "bl", "message": map[string]any{"content": "x"},
		"promptSource": "typed", "turnOrigin": "human", "turnPosition": map[string]any{"turnIndex": 977}})
	_, err = f.WriteAt([]byte("\n"+last), 2<<30)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	got, err := List(home, workdir, 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"the first prompt of a huge session", fmt.Sprintf("prompt %d", n-1), fmt.Sprintf("prompt %d", n-2)},
		[]string{got[0].FirstPrompt, got[1].FirstPrompt, got[2].FirstPrompt})
	assert.Equal(t, 977, got[0].Turns)
	assert.False(t, got[0].TurnsExact)

	// Since and Export read at most 64 MiB of it.
	d, m, err := Since(big, Mark{})
	require.NoError(t, err)
	assert.True(t, d.Partial)
	assert.True(t, d.Extended())
	assert.Equal(t, "bl", m.UUID, "the next mark is at the file's end")
	md, err := Export(big, ExportOptions{})
	require.NoError(t, err)
	assert.Contains(t, md, "are not included")
}

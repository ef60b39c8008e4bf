package bridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCwdSlugIsTheCLIs(t *testing.T) {
	for dir, want := range map[string]string{
		"/home/dev/proj":      "-home-dev-proj",
		"/tmp/a.b_c d":        "-tmp-a-b-c-d",
		"/srv/café":           "-srv-caf-",
		"/srv/\U0001F600x":    "-srv---x", // two UTF-16 units, two dashes, as in JavaScript
		"/work/.worktrees/fe": "-work--worktrees-fe",
	} {
		assert.Equal(t, want, cwdSlug(dir), dir)
	}
}

func TestLatestSessionIsTheNewestTranscriptOfTheDirectory(t *testing.T) {
	cfg := t.TempDir()
	write := func(dir, name, body string, age time.Duration) {
		t.Helper()
		d := filepath.Join(cfg, "projects", dir)
		require.NoError(t, os.MkdirAll(d, 0o700))
		p := filepath.Join(d, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		at := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(p, at, at))
	}
	const older, newer, other = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	write("-srv-api", older+".jsonl", "{}", 2*time.Hour)
	write("-srv-api", newer+".jsonl", "{}", time.Hour)
	write("-srv-api", "notes.jsonl", "{}", 0)     // not a session's transcript
	write("-srv-api-v2", other+".jsonl", "{}", 0) // another directory
	write("-srv-api", "44444444-4444-4444-8444-444444444444.jsonl.tmp", "{}", 0)
	id, err := latestSession(cfg, "/srv/api")
	require.NoError(t, err)
	assert.Equal(t, newer, id)

	id, err = latestSession(cfg, "/srv/nothing-here")
	require.NoError(t, err)
	assert.Empty(t, id)

	// A directory whose name the CLI cuts and hashes: matched by prefix,
	// then by the cwd its transcripts record.
	long := "/srv/" + strings.Repeat("x", 250)
	slug := cwdSlug(long)
	write(slug[:slugMax]+"-abc123", older+".jsonl", `{"cwd":"`+long+`"}`, time.Hour)
	write(slug[:slugMax]+"-def456", newer+".jsonl", `{"cwd":"`+long+`y"}`, 0) // a longer sibling
	id, err = latestSession(cfg, long)
	require.NoError(t, err)
	assert.Equal(t, older, id)
}

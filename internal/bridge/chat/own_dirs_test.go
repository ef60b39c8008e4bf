package chat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/safefs"
)

// projectFiles lists every path under dir but .untether's own entries
// (the links the test made), with each file's content.
func projectFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || strings.HasPrefix(rel, ".untether") {
			return nil
		}
		got[rel] = ""
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			got[rel] = string(data)
		}
		return nil
	}))
	return got
}

// TestUntetherDirLinksAreRefused: with any of untether's own directories
// linked back into the project, nothing is pruned, written or created
// through the link (issue 22 §4): old project files survive the pruners,
// and uploads, full diffs and zips are refused instead of landing in the
// project.
func TestUntetherDirLinksAreRefused(t *testing.T) {
	for _, tc := range []struct{ link, target string }{
		{".untether", "."},
		{".untether/uploads", ".."},
		{".untether/sent", ".."},
	} {
		t.Run(tc.link, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o700))
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, tc.link)), 0o700))
			require.NoError(t, os.Symlink(tc.target, filepath.Join(dir, tc.link)))
			old := time.Now().Add(-1000 * time.Hour)
			for _, f := range []string{"main.go", "go.mod", "src/lib.go"} {
				p := filepath.Join(dir, f)
				require.NoError(t, os.WriteFile(p, []byte(f), 0o600))
				require.NoError(t, os.Chtimes(p, old, old))
			}
			before := projectFiles(t, dir)

			_, err := pruneUploads(dir, time.Hour, time.Now())
			if tc.link != ".untether/sent" {
				assert.ErrorIs(t, err, safefs.ErrSymlink)
			}
			_, err = pruneDir(dir, sentDir, time.Hour, time.Now())
			if tc.link != ".untether/uploads" {
				assert.ErrorIs(t, err, safefs.ErrSymlink)
			}
			_, _, err = saveUpload(dir, "upload.txt", strings.NewReader("up"), 100, time.Now())
			if tc.link != ".untether/sent" {
				var od *ownDirError
				require.ErrorAs(t, err, &od)
				assert.Equal(t, filepath.Join(dir, tc.link), od.path, "the message names the link")
				assert.Contains(t, err.Error(), "is a symbolic link")
			}
			if tc.link != ".untether/uploads" {
				f, _, err := writeSent(dir, "x.diff", []byte("diff"), time.Now())
				assert.ErrorIs(t, err, safefs.ErrSymlink)
				assert.Nil(t, f)
				f, _, _, err = writeZip(context.Background(), dir, "src", "src.zip", nil, time.Now())
				assert.ErrorIs(t, err, safefs.ErrSymlink)
				assert.Nil(t, f)
			}
			assert.Equal(t, before, projectFiles(t, dir), "no project file deleted, and nothing written into the project")
			target, err := os.Readlink(filepath.Join(dir, tc.link))
			require.NoError(t, err)
			assert.Equal(t, tc.target, target, "the link is left alone")
		})
	}
}

// TestOwnDirRefusalsAreReportedOnce: a refused directory is logged once
// and each chat is told once, until the directory opens as it should.
func TestOwnDirRefusalsAreReportedOnce(t *testing.T) {
	var o ownDirs
	a, b := state.ChatKey{Chat: 1}, state.ChatKey{Chat: 2}
	assert.True(t, o.first("/p/.untether/sent", a))
	assert.False(t, o.first("/p/.untether/sent", a), "once per chat")
	assert.True(t, o.first("/p/.untether/sent", b))
	assert.True(t, o.first("/p/.untether", a))
	o.fine("/p", ".untether/sent")
	assert.True(t, o.first("/p/.untether/sent", a), "told again once it was fine")
	assert.True(t, o.first("/p/.untether", a), "the parents were fine too")
}

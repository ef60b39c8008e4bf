package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/owndir"
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

			_, err := owndir.PruneUploads(dir, time.Hour, time.Now())
			if tc.link != ".untether/sent" {
				assert.ErrorIs(t, err, safefs.ErrSymlink)
			}
			_, err = owndir.PruneDir(dir, owndir.Sent, time.Hour, time.Now())
			if tc.link != ".untether/uploads" {
				assert.ErrorIs(t, err, safefs.ErrSymlink)
			}
			_, _, err = owndir.SaveUpload(dir, "upload.txt", strings.NewReader("up"), 100, time.Now())
			if tc.link != ".untether/sent" {
				var od *owndir.Error
				require.ErrorAs(t, err, &od)
				assert.Equal(t, filepath.Join(dir, tc.link), od.Path(), "the message names the link")
				assert.Contains(t, err.Error(), "is a symbolic link")
			}
			if tc.link != ".untether/uploads" {
				f, _, err := owndir.WriteSent(dir, "x.diff", []byte("diff"), time.Now())
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

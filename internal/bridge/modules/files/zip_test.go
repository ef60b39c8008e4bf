package files

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteZipLeavesOutUntetherAndWorktrees: /get . of a main checkout
// sends the project, not every worktree inside it nor any .untether
// (uploads, files sent) wherever it is; asked for a worktree by its path,
// /get sends that worktree, still without its .untether.
func TestWriteZipLeavesOutUntetherAndWorktrees(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"README", "src/main.go", "src/.untether/stray",
		".untether/uploads/photo.jpg", ".untether/sent/old.zip",
		".worktrees/feature/README", ".worktrees/feature/.untether/uploads/x.txt",
		".worktrees/fix/y/README",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f), 0o600))
	}
	for _, tc := range []struct {
		dir, name string
		want      []string
	}{
		{".", "proj.zip", []string{"proj/README", "proj/src/main.go"}},
		{".worktrees/feature", "feature.zip", []string{"feature/README"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			f, rel, st, err := writeZip(context.Background(), dir, tc.dir, tc.name, nil, time.Now())
			require.NoError(t, err)
			defer f.Close()
			assert.FileExists(t, filepath.Join(dir, rel))
			zr := readZip(t, f)
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
			}
			slices.Sort(names)
			assert.Equal(t, tc.want, names)
			assert.Equal(t, len(tc.want), st.files)
		})
	}
}

// readZip opens the zip written to f.
func readZip(t *testing.T, f *os.File) *zip.Reader {
	t.Helper()
	info, err := f.Stat()
	require.NoError(t, err)
	zr, err := zip.NewReader(f, info.Size())
	require.NoError(t, err)
	return zr
}

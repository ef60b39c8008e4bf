package safefs_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/safefs"
)

// tree makes a project with untether's directories in it, a secret, and
// the hostile entries a tool could leave: links to the project and out of
// it, a FIFO.
func tree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{".untether/sent", "src"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, ".env"), []byte("SECRET=1"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(base, ".untether/sent/report.txt"), []byte("report"), 0o600))
	require.NoError(t, os.Symlink("../..", filepath.Join(base, ".untether/sent/up")))
	require.NoError(t, os.Symlink("../../.env", filepath.Join(base, ".untether/sent/env.txt")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(base, ".untether/sent/pipe"), 0o600))
	require.NoError(t, os.Symlink("..", filepath.Join(base, ".untether/uploads")))
	return base
}

func TestSubRefusesLinksAndNonDirectories(t *testing.T) {
	base := tree(t)
	for _, tc := range []struct {
		rel    string
		create bool
		want   error
		at     string // the component named in the error
	}{
		{rel: ".untether/sent"},
		{rel: ".untether/outbox/1001", create: true},
		{rel: ".untether/uploads", want: safefs.ErrSymlink, at: ".untether/uploads"},
		{rel: ".untether/uploads/x", create: true, want: safefs.ErrSymlink, at: ".untether/uploads"},
		{rel: ".untether/sent/up", want: safefs.ErrSymlink, at: ".untether/sent/up"},
		{rel: ".env/x", want: safefs.ErrNotDir, at: ".env"},
		{rel: ".untether/missing", want: fs.ErrNotExist, at: ".untether/missing"},
		{rel: "../x", want: fs.ErrInvalid},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			d, err := safefs.OpenDir(base, tc.rel, tc.create)
			if tc.want == nil {
				require.NoError(t, err)
				assert.DirExists(t, filepath.Join(base, tc.rel))
				assert.Equal(t, filepath.Join(base, tc.rel), d.Name())
				require.NoError(t, d.Close())
				return
			}
			require.ErrorIs(t, err, tc.want)
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe)
			if tc.at != "" {
				assert.Equal(t, tc.at, pe.Path)
			}
		})
	}
	assert.NoDirExists(t, filepath.Join(base, "x"), "nothing was created through the link")
}

func TestOpenNeverBlocksAndOpensOnlyRegularFiles(t *testing.T) {
	base := tree(t)
	d, err := safefs.OpenDir(base, ".untether/sent", false)
	require.NoError(t, err)
	defer d.Close()
	for name, want := range map[string]error{"pipe": safefs.ErrNotRegular, "env.txt": safefs.ErrSymlink, "up": safefs.ErrSymlink} {
		done := make(chan error, 1)
		go func() {
			f, err := d.Open(name)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, want, name)
		case <-time.After(10 * time.Second):
			// Unblock the open before failing, so the test ends.
			w, _ := os.OpenFile(filepath.Join(base, ".untether/sent", name), os.O_WRONLY, 0)
			if w != nil {
				w.Close()
			}
			t.Fatalf("opening %s blocked", name)
		}
	}
	f, err := d.Open("report.txt")
	require.NoError(t, err)
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "report", string(data))
	require.NoError(t, f.Close())

	root, err := safefs.OpenBase(base)
	require.NoError(t, err)
	defer root.Close()
	_, err = root.OpenFile(".untether/uploads/.env")
	assert.ErrorIs(t, err, safefs.ErrSymlink, "a link on the way is refused too")
	_, err = root.OpenFile("src")
	assert.ErrorIs(t, err, safefs.ErrNotRegular)
	f, err = root.OpenFile(".untether/sent/report.txt")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestCreateRenameRemoveNeverTouchWhatIsThere(t *testing.T) {
	base := tree(t)
	d, err := safefs.OpenDir(base, ".untether/sent", false)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Create("env.txt")
	assert.ErrorIs(t, err, fs.ErrExist, "a link at the name is not written through")
	f, err := d.Create("new.zip")
	require.NoError(t, err)
	_, err = f.WriteString("zip")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	assert.ErrorIs(t, d.Rename("new.zip", d, "report.txt"), fs.ErrExist, "rename never replaces")
	require.NoError(t, d.Rename("new.zip", d, "renamed.zip"))

	root, err := safefs.OpenBase(base)
	require.NoError(t, err)
	defer root.Close()
	assert.Error(t, root.Remove("src"), "a directory is never removed")
	assert.DirExists(t, filepath.Join(base, "src"))
	require.NoError(t, d.Remove("env.txt"))
	assert.FileExists(t, filepath.Join(base, ".env"), "removing a link leaves its target")

	names, err := d.Names(0)
	require.NoError(t, err)
	slices.Sort(names)
	assert.Equal(t, []string{"pipe", "renamed.zip", "report.txt", "up"}, names)
	two, err := d.Names(2)
	require.NoError(t, err)
	assert.Len(t, two, 2)

	info, err := d.Lstat("pipe")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeNamedPipe, info.Mode().Type())
	info, err = d.Lstat("up")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSymlink, info.Mode().Type())
	_, err = d.Lstat("../x")
	assert.True(t, errors.Is(err, fs.ErrInvalid))
}

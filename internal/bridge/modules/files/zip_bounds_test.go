package files

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/owndir"
)

// lower sets *v to x for the test.
func lower[T any](t *testing.T, v *T, x T) {
	old := *v
	*v = x
	t.Cleanup(func() { *v = old })
}

// TestWriteZipIsBounded: a directory a tool filled cannot make /get read
// without end (issue 22 §12): a sparse file of a GiB is refused before a
// byte of it is read, and so is a directory with more entries or bytes
// than a zip may take, or one whose zipping outlives its deadline. Nothing
// is left in .untether/sent.
func TestWriteZipIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) context.Context
		want  error
	}{
		{"sparse GiB file", func(t *testing.T, dir string) context.Context {
			f, err := os.Create(filepath.Join(dir, "big/disk.img"))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(1<<30))
			require.NoError(t, f.Close())
			return context.Background()
		}, errZipRead},
		{"bytes", func(t *testing.T, dir string) context.Context {
			lower(t, &zipMaxRead, 1000)
			for _, n := range []string{"a", "b"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "big", n), make([]byte, 600), 0o600))
			}
			return context.Background()
		}, errZipRead},
		{"entries", func(t *testing.T, dir string) context.Context {
			lower(t, &zipMaxEntries, 50)
			for i := range 60 {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "big", strconv.Itoa(i)), []byte("x"), 0o600))
			}
			return context.Background()
		}, errZipEntries},
		{"deadline", func(t *testing.T, dir string) context.Context {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "big/a"), []byte("x"), 0o600))
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}, errZipSlow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "big"), 0o700))
			ctx := tc.setup(t, dir)
			f, _, st, err := writeZip(ctx, dir, "big", "big.zip", nil, time.Now())
			if f != nil {
				f.Close()
			}
			require.ErrorIs(t, err, tc.want)
			assert.LessOrEqual(t, st.read, zipMaxRead)
			entries, err := os.ReadDir(filepath.Join(dir, owndir.Sent))
			require.NoError(t, err)
			assert.Empty(t, entries, "the partial zip is removed")
			assert.NotEmpty(t, zipFailure("<code>big</code>", tc.want), "the chat is told")
		})
	}
}

// TestWriteZipSendsWhatItChecked: a file swapped, between the listing and
// its opening, for a link to a secret or for a FIFO is left out: the zip
// never holds the secret under the innocent name, and never blocks.
func TestWriteZipSendsWhatItChecked(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "notes"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET=1"), 0o600))
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "notes", n), []byte("note "+n), 0o600))
	}
	fifo := filepath.Join(dir, "notes/b.txt")
	t.Cleanup(func() { // unblock a reader stuck on the FIFO (the bug), so the test ends
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	swap := func(rel string) {
		switch rel {
		case "notes/a.txt":
			require.NoError(t, os.Remove(filepath.Join(dir, rel)))
			require.NoError(t, os.Symlink("../.env", filepath.Join(dir, rel)))
		case "notes/b.txt":
			require.NoError(t, os.Remove(fifo))
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		}
	}
	beforeZipOpen.Store(&swap)
	t.Cleanup(func() { beforeZipOpen.Store(nil) })
	type result struct {
		f   *os.File
		st  zipStats
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, _, st, err := writeZip(context.Background(), dir, "notes", "notes.zip", nil, time.Now())
		done <- result{f, st, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("zipping blocked on a FIFO")
	}
	require.NoError(t, r.err)
	defer r.f.Close()
	got := map[string]string{}
	for _, zf := range readZip(t, r.f).File {
		rc, err := zf.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		got[zf.Name] = string(data)
	}
	assert.Equal(t, map[string]string{"notes/c.txt": "note c.txt"}, got)
	assert.Equal(t, 2, r.st.skipped)
}

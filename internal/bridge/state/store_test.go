package state_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/untether/untether/internal/bridge/state"
)

// t0 is a fixed instant; stored times come back in UTC, so fixed UTC times
// compare equal with assert.Equal.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

func openStore(t testing.TB, dir string) *state.Store {
	t.Helper()
	s, err := state.Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newStore(t testing.TB) *state.Store {
	t.Helper()
	return openStore(t, t.TempDir())
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Mode().Perm()
}

func TestChatKeyString(t *testing.T) {
	tests := []struct {
		key  state.ChatKey
		want string
	}{
		{state.ChatKey{Chat: 123}, "123"},
		{state.ChatKey{Chat: 123, Thread: 7}, "123/7"},
		{state.ChatKey{Chat: -1001234567890, Thread: 42}, "-1001234567890/42"},
		{state.ChatKey{}, "0"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.key.String())
	}
}

// Not parallel: it changes the process umask to prove the modes do not
// depend on it. Under umask 0 SQLite's own default would be 0644.
func TestOpenCreatesPrivateFiles(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	dir := filepath.Join(t.TempDir(), "nested", "state")
	s := openStore(t, dir)
	require.NoError(t, s.SetLastUpdateID(context.Background(), 1))

	assert.Equal(t, os.FileMode(0o700), mode(t, dir))
	db := filepath.Join(dir, state.FileName)
	assert.Equal(t, db, s.Path())
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		assert.Equal(t, os.FileMode(0o600), mode(t, p), p)
	}
}

func TestOpenTightensExistingFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, state.FileName)
	require.NoError(t, os.WriteFile(db, nil, 0o644))
	require.NoError(t, os.Chmod(db, 0o644))

	openStore(t, dir)
	assert.Equal(t, os.FileMode(0o600), mode(t, db))
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) string // returns the dir to open
		wantIs  error                     // nil: any error
		wantMsg string
	}{
		{
			name:    "empty dir",
			setup:   func(*testing.T) string { return "" },
			wantIs:  state.ErrInvalid,
			wantMsg: "empty directory",
		},
		{
			name: "dir is a file",
			setup: func(t *testing.T) string {
				p := filepath.Join(t.TempDir(), "file")
				require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
				return p
			},
			wantIs:  state.ErrInvalid,
			wantMsg: "not a directory",
		},
		{
			name: "parent is a file",
			setup: func(t *testing.T) string {
				p := filepath.Join(t.TempDir(), "file")
				require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
				return filepath.Join(p, "state")
			},
			wantIs:  syscall.ENOTDIR,
			wantMsg: "inspect directory",
		},
		{
			name: "corrupt database",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				junk := make([]byte, 8192)
				for i := range junk {
					junk[i] = byte(i*7 + 3)
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, state.FileName), junk, 0o600))
				return dir
			},
			wantIs:  state.ErrCorrupt,
			wantMsg: state.FileName,
		},
		{
			name: "database is a directory",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				require.NoError(t, os.Mkdir(filepath.Join(dir, state.FileName), 0o700))
				return dir
			},
			wantIs:  syscall.EISDIR,
			wantMsg: "create database file",
		},
		{
			name: "schema from the future",
			setup: func(t *testing.T) string {
				dir := t.TempDir()
				db, err := sql.Open("sqlite", filepath.Join(dir, state.FileName))
				require.NoError(t, err)
				_, err = db.Exec("PRAGMA user_version = 999")
				require.NoError(t, err)
				require.NoError(t, db.Close())
				return dir
			},
			wantIs:  state.ErrSchemaTooNew,
			wantMsg: "schema version 999",
		},
		{
			name: "unwritable dir",
			setup: func(t *testing.T) string {
				if os.Geteuid() == 0 {
					t.Skip("root ignores directory permissions")
				}
				dir := t.TempDir()
				require.NoError(t, os.Chmod(dir, 0o500))
				t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
				return dir
			},
			wantIs:  os.ErrPermission,
			wantMsg: "create database file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t)
			s, err := state.Open(context.Background(), dir)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, tt.wantIs)
			assert.Contains(t, err.Error(), "open state")
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i := range 3 {
		s, err := state.Open(ctx, dir)
		require.NoError(t, err, "open #%d", i)
		v, err := s.SchemaVersion(ctx)
		require.NoError(t, err)
		assert.Equal(t, state.LatestSchema(), v)
		// Data written by an earlier open is still there, so a reopen did
		// not re-create tables.
		got, err := s.LastUpdateID(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(i*10), got)
		require.NoError(t, s.SetLastUpdateID(ctx, int64((i+1)*10)))
		require.NoError(t, s.Close())
	}
}

func TestOpenConcurrentlyOnFreshDir(t *testing.T) {
	// Two opens racing on a new database must not both apply migration 1.
	ctx := context.Background()
	dir := t.TempDir()
	errs := make(chan error, 4)
	stores := make(chan *state.Store, 4)
	for range 4 {
		go func() {
			s, err := state.Open(ctx, dir)
			errs <- err
			stores <- s
		}()
	}
	for range 4 {
		assert.NoError(t, <-errs)
		if s := <-stores; s != nil {
			require.NoError(t, s.Close())
		}
	}
}

func TestLastUpdateIDMonotonic(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)

	got, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), got, "no offset yet")

	steps := []struct {
		set  int64
		want int64
	}{
		{100, 100},
		{105, 105},
		{103, 105}, // a slow handler finishing late must not rewind
		{105, 105},
		{0, 105},
		{-1, 105},
		{106, 106},
	}
	for _, st := range steps {
		require.NoError(t, s.SetLastUpdateID(ctx, st.set))
		got, err := s.LastUpdateID(ctx)
		require.NoError(t, err)
		assert.Equal(t, st.want, got, "after set %d", st.set)
	}
}

func TestCancelledContext(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, s.SetLastUpdateID(ctx, 1), context.Canceled)
	_, err := s.LastUpdateID(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestClosedStore(t *testing.T) {
	s, err := state.Open(context.Background(), t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Close())
	err = s.SetLastUpdateID(context.Background(), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "save last update id 1")
}

// The path goes into a file: URI; characters that mean something in a URI
// must not be read as query parameters or a fragment.
func TestOpenPathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a b?c=d#e%20f&_pragma=x")
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, s.SetLastUpdateID(ctx, 7))
	require.NoError(t, s.Close())

	_, err = os.Stat(filepath.Join(dir, state.FileName))
	require.NoError(t, err, "the database is where we asked, not at a truncated path")
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no stray file beside the state dir")

	s = openStore(t, dir)
	got, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(7), got)
}

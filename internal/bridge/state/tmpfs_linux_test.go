package state_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/untether/untether/internal/bridge/state"
)

// inNamespaceEnv names, in the child test process, the test it runs inside
// a private mount namespace.
const inNamespaceEnv = "UNTETHER_TEST_IN_MOUNT_NS"

// inPrivateMountNamespace runs the calling test again in a child test
// process under `unshare --mount`, where it may mount a tmpfs that nothing
// outside sees and that vanishes with it. It returns true in the child (go
// on with the test) and false in the parent (the child's verdict is the
// test's). A machine where that is impossible skips, or fails when
// UNTETHER_REQUIRE_REAL_CLAUDE=1 says the full suite must run.
func inPrivateMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(inNamespaceEnv) == t.Name() {
		return true
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		cannotIsolate(t, err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0],
		"-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), inNamespaceEnv+"="+t.Name())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("in a private mount namespace:\n%s", out.String())
	switch {
	case err != nil && strings.Contains(out.String(), "unshare failed"):
		cannotIsolate(t, err)
	case err != nil:
		t.Fatalf("the test failed in its mount namespace: %v", err)
	case !strings.Contains(out.String(), "--- PASS: "+t.Name()):
		t.Fatalf("the test did not pass in its mount namespace")
	}
	return false
}

func cannotIsolate(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("UNTETHER_REQUIRE_REAL_CLAUDE") == "1" {
		t.Fatalf("cannot run a test in a private mount namespace (needs root and unshare): %v", err)
	}
	t.Skipf("cannot run a test in a private mount namespace (needs root and unshare): %v", err)
}

// mountTmpfs mounts a tmpfs of size (mount's notation, e.g. "1m") on a new
// directory and returns it. Call it only inside inPrivateMountNamespace.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"), "mount a tmpfs")
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fill writes a file until the file system is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling stops at ENOSPC: %v", err)
			return p
		}
	}
}

// TestFullDiskOnRealTmpfs: the state dir on a real, tiny tmpfs. Once it is
// full, writes fail with ErrDiskFull and reads go on; once space returns
// the very same store takes writes again, without a reopen, and the
// database is intact.
func TestFullDiskOnRealTmpfs(t *testing.T) {
	if !inPrivateMountNamespace(t) {
		return
	}
	ctx := context.Background()
	dir := mountTmpfs(t, "2m")
	s, err := state.Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	key := state.ChatKey{Chat: 42}
	require.NoError(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: "before"}))
	require.NoError(t, s.SetLastUpdateID(ctx, 10))

	filler := fill(t, dir)
	free, err := s.FreeBytes()
	require.NoError(t, err)
	assert.Less(t, free, uint64(4096), "the file system is full")
	// A write appends to the WAL, which needs a new page: there is none.
	// Each is its own transaction, so a few may still fit in the last page.
	var werr error
	for i := 0; i < 50 && werr == nil; i++ {
		werr = s.RecordTurn(ctx, state.TurnRecord{Key: key, StartedAt: t0, OK: true, TerminalReason: strings.Repeat("x", 2000)})
	}
	require.ErrorIs(t, werr, state.ErrDiskFull)
	require.ErrorIs(t, werr, state.ErrStorage)
	require.ErrorIs(t, s.CheckWritable(ctx), state.ErrDiskFull)
	require.ErrorIs(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: "during"}), state.ErrDiskFull)
	c, err := s.GetChat(ctx, key)
	require.NoError(t, err, "reads work on a full disk")
	assert.Equal(t, "before", c.SessionID, "the failed write changed nothing")

	// A daemon restarted on the full disk opens its state and reads what
	// a start needs.
	require.NoError(t, s.Close())
	s, err = state.Open(ctx, dir)
	require.NoError(t, err, "the store opens on a full disk")
	defer s.Close()
	off, err := s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(10), off)
	_, err = s.HandledUpdatesAbove(ctx, off)
	require.NoError(t, err)
	require.ErrorIs(t, s.CheckWritable(ctx), state.ErrDiskFull, "still full")

	require.NoError(t, os.Remove(filler))
	require.NoError(t, s.CheckWritable(ctx), "the same store takes writes again")
	require.NoError(t, s.PutChat(ctx, state.Chat{Key: key, SessionID: "after"}))
	require.NoError(t, s.SetLastUpdateID(ctx, 11))
	require.NoError(t, s.Close())

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, state.FileName)+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var check string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&check))
	assert.Equal(t, "ok", check)
	s = openStore(t, dir)
	c, err = s.GetChat(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "after", c.SessionID)
	off, err = s.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(11), off)
}

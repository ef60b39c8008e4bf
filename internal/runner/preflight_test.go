package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFakeBinary installs at path a CLI "binary" (a script running the
// fake CLI) reporting version, the way npm does: a new file renamed over
// the old one.
func writeFakeBinary(t *testing.T, path, version string) {
	t.Helper()
	script := fmt.Sprintf("#!/bin/sh\nUNTETHER_FAKE_CLI_VERSION=%s exec '%s' \"$@\"\n", version, os.Args[0])
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(script), 0o755))
	require.NoError(t, os.Rename(tmp, path))
}

func turnVersion(t *testing.T, log *eventLog, from int) string {
	t.Helper()
	ev, _ := log.waitFor(t, from, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
	return ev.(TurnStarted).Version
}

func TestSpawnPicksUpABinaryUpdatedInPlace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	writeFakeBinary(t, bin, "1.0.0")
	s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.Binary = bin })
	send(t, s, "one")
	_, i := log.waitFor(t, 0, "turn", turnDone)
	assert.Equal(t, "1.0.0", turnVersion(t, log, 0))

	writeFakeBinary(t, bin, "2.0.0")
	n := log.len()
	send(t, s, "two")
	log.waitFor(t, i+1, "turn on the live process", turnDone)
	assert.Equal(t, "1.0.0", turnVersion(t, log, n), "the live process finishes its work on the old binary")

	require.NoError(t, s.CloseProcess(context.Background()))
	log.waitFor(t, 0, "exit", func(ev Event) bool { return is[ProcessExited](ev) })
	n = log.len()
	send(t, s, "three")
	log.waitFor(t, n, "turn on a new process", turnDone)
	assert.Equal(t, "2.0.0", turnVersion(t, log, n), "the next spawn runs the new binary")
}

func TestSpawnWithoutBinaryKillsNothing(t *testing.T) {
	pool := NewPool(1, 1)
	live, liveLog := newFakeSession(t, fakeScript{}, func(c *Config) { c.Pool = pool })
	send(t, live, "I keep running")
	_, i := liveLog.waitFor(t, 0, "turn", turnDone)
	pid := live.PID()

	bin := filepath.Join(t.TempDir(), "claude")
	s, log := newFakeSession(t, fakeScript{}, func(c *Config) { c.Binary, c.Pool = bin, pool })
	_, err := s.Send(context.Background(), UserInput{Text: "hello"})
	require.ErrorIs(t, err, ErrBinaryMissing)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var me *MissingError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, bin, me.Path)
	assert.Contains(t, err.Error(), bin, "the message names the path")
	assert.Equal(t, StateExited, s.State())

	// The idle process was not evicted for a spawn that could not work.
	send(t, live, "still here")
	liveLog.waitFor(t, i+1, "turn", turnDone)
	assert.Equal(t, pid, live.PID())
	assert.Equal(t, 1, pool.Live())

	// Back as soon as the binary is (once the live slot frees).
	writeFakeBinary(t, bin, "1.0.0")
	require.NoError(t, live.CloseProcess(context.Background()))
	send(t, s, "again")
	ev, _ := log.waitFor(t, 0, "turn", turnDone)
	assert.Equal(t, "echo: again", ev.(TurnCompleted).Answer)
}

func TestSpawnWithoutWorkdir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		name, dir string
		cause     error
	}{
		{name: "deleted", dir: filepath.Join(root, "gone"), cause: fs.ErrNotExist},
		{name: "not a directory", dir: file, cause: errNotDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newFakeSession(t, fakeScript{}, func(c *Config) { c.Workdir = tt.dir })
			_, err := s.Send(context.Background(), UserInput{Text: "hello"})
			require.ErrorIs(t, err, ErrWorkdirMissing)
			require.ErrorIs(t, err, tt.cause)
			assert.False(t, errors.Is(err, ErrBinaryMissing))
			assert.True(t, strings.Contains(err.Error(), tt.dir), "names the directory: %v", err)
			st, statErr := os.Stat(tt.dir)
			assert.True(t, statErr != nil || !st.IsDir(), "nothing is recreated")
		})
	}
}

func TestLastOutputIsMonotonic(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "hi")
	log.waitFor(t, 0, "turn", turnDone)
	// A time with a monotonic reading prints it ("m=+…"); differences with
	// time.Now() then ignore wall-clock jumps.
	assert.Contains(t, s.LastOutput().String(), " m=+")
}

package state_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
)

func TestLockIsExclusiveAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("UNTETHER_LOCK_CHILD"); dir != "" {
		_, err := state.Lock(dir)
		if errors.Is(err, state.ErrLocked) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	unlock, err := state.Lock(dir)
	require.NoError(t, err)

	child := func() int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockIsExclusiveAcrossProcesses$")
		cmd.Env = append(os.Environ(), "UNTETHER_LOCK_CHILD="+dir)
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	}
	assert.Equal(t, 3, child(), "a second process is refused while the lock is held")
	require.NoError(t, unlock())
	assert.Equal(t, 0, child(), "and may take it once released")
}

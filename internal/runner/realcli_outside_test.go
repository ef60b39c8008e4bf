package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealCLIFindOutside: while a session's CLI runs under the runner, a
// real claude --resume of the same session started outside it (as at a
// terminal) is found, by the real CLI's own command line; the runner's CLI
// is left out by its tree tag, and by descending from the daemon.
func TestRealCLIFindOutside(t *testing.T) {
	r := newRealSession(t, nil)
	id := r.s.ID()
	send(t, r.s, "from the phone")
	r.log.waitFor(t, 0, "answer", turnDone)
	own := r.s.PID()
	require.NotZero(t, own)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	terminal := r.env.Command(ctx, "--resume", string(id))
	in, err := terminal.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, terminal.Start())
	defer func() {
		_ = in.Close()
		_ = terminal.Wait()
	}()
	f := newFakeCLIs(t)
	standIn := f.startVia(t.TempDir(), nil, "sh", "-c", "read line") // a daemon that started neither

	found, err := FindOutside(OutsideQuery{ID: id, Dir: r.env.Workdir, Daemon: standIn.Process.Pid})
	require.NoError(t, err)
	require.Len(t, found, 1, "%+v", found)
	c := found[0]
	assert.Equal(t, terminal.Process.Pid, c.PID)
	assert.Equal(t, HowResume, c.How)
	assert.Equal(t, r.env.Binary, c.Argv[0])
	assert.Equal(t, r.env.Workdir, c.Cwd)

	args, err := readCmdline(own)
	require.NoError(t, err)
	assert.Equal(t, HowSessionID, sessionFlag(args[1:], id), "the runner's CLI names the session too: %q", args)
	assert.NotEmpty(t, procTag(own), "and carries the tree tag, which leaves it out")

	found, err = FindOutside(OutsideQuery{ID: id, Dir: r.env.Workdir})
	require.NoError(t, err)
	assert.Empty(t, found, "both are this process's children")
}

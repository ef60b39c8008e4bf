package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliArgs is the argv of the running process pid.
func cliArgs(t *testing.T, pid int) []string {
	t.Helper()
	args, err := readCmdline(pid)
	require.NoError(t, err)
	return args
}

// TestRealCLIGluedSessionFlags: the real CLI takes the session id and the
// model glued to their flags (--session-id=<id>, --resume=<id>,
// --model=<name>), the only form the runner passes them in (ids.go): the
// first process names the session, the second resumes it with its history.
func TestRealCLIGluedSessionFlags(t *testing.T) {
	const model = "claude-sonnet-4-5[1m]"
	r := newRealSession(t, func(c *Config) { c.Model = model })
	id := r.s.ID()
	send(t, r.s, "REMEMBER the word papaya")
	ev, i := r.log.waitFor(t, 0, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
	assert.Equal(t, id, ev.(TurnStarted).SessionID, "the CLI took the id given with --session-id=")
	_, i = r.log.waitFor(t, i, "answer", turnDone)
	args := cliArgs(t, r.s.PID())
	assert.Contains(t, args, "--session-id="+string(id))
	assert.Contains(t, args, "--model="+model)
	calls := r.env.API.ModelCalls()
	// [1m] is the CLI's suffix for the 1M-token context window; the API
	// call names the model without it.
	assert.Equal(t, "claude-sonnet-4-5", calls[len(calls)-1].Model(), "the CLI took the model given with --model=")

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, r.s.CloseProcess(ctx))
	_, i = r.log.waitFor(t, i, "closed", func(ev Event) bool { return is[ProcessExited](ev) })
	send(t, r.s, "what was the word?")
	ev, _ = r.log.waitFor(t, i, "answer after resume", answerIs("echo: what was the word?"))
	assert.Equal(t, id, ev.(TurnCompleted).SessionID)
	assert.Contains(t, cliArgs(t, r.s.PID()), "--resume="+string(id))
	calls = r.env.API.ModelCalls()
	assert.True(t, calls[len(calls)-1].AnyUserContains("papaya"), "--resume= resumed the conversation with its history")
}

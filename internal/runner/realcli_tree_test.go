package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// escapeCommand starts a process in a session of its own (setsid), with no
// tie to the Bash tool's pipes, and records its pid: what ssh-agent or a
// dev server started from a tool looks like.
const escapeCommand = `setsid sh -c 'echo $$ > escaped.pid; exec tail -f /dev/null' </dev/null >/dev/null 2>&1 &`

func TestRealCLISetsidToolIsKilledWithTheSession(t *testing.T) {
	require.NoError(t, EnableSubreaper())
	r := newRealSession(t, nil)
	s, log := r.s, r.log
	send(t, s, "ESCAPE please")
	ev, _ := log.waitFor(t, 0, "approval", approvalFor("Bash"))
	require.NoError(t, s.Respond(ev.(ApprovalRequested).RequestID, Decision{Behavior: Allow}))
	ev, _ = log.waitFor(t, 0, "answer", turnDone)
	require.Equal(t, "Started it.", ev.(TurnCompleted).Answer)

	st := escapedTool(t, filepath.Join(r.env.Workdir, "escaped.pid"), s.PID())

	require.NoError(t, s.Close(context.Background()))
	requireGone(t, st.PID, st.StartTime)
}

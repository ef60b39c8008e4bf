package runner

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// TestRealCLIBackgroundJobOutlivesIdleTimeout: a Bash job run in the
// background keeps its CLI out of idle close (StateWaiting) past a short
// idle_timeout; when the job ends the CLI starts a turn by itself, on the
// same process, and only then may it go idle and close.
func TestRealCLIBackgroundJobOutlivesIdleTimeout(t *testing.T) {
	rules := fakeapi.ToolTurn("BGJOB", "Bash", map[string]any{
		"command": "sleep 4; echo job-done", "run_in_background": true, "description": "slow job"}, "Started it.")
	script := fakeapi.Script{Rules: rules, Default: &fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("The job finished.")}}}
	env := claudetest.New(t, script)
	s, log := startSession(t, Config{Binary: env.Binary, Workdir: env.Workdir, Env: env.Vars,
		InheritEnv: []string{"PATH=/usr/bin:/bin"}, Logger: zerolog.New(zerolog.NewTestWriter(t)),
		IdleTimeout: time.Second})
	send(t, s, "BGJOB please") // sleep and echo need no approval
	_, i := log.waitFor(t, 0, "the first answer", answerIs("Started it."))
	pid := s.PID()
	require.NotZero(t, pid)

	require.Eventually(t, func() bool { return s.State() == StateWaiting }, 5*time.Second, 20*time.Millisecond,
		"a CLI with a job in the background waits for it")
	tasks, _ := s.Background()
	assert.Equal(t, 1, tasks)
	time.Sleep(1500 * time.Millisecond) // past idle_timeout
	assert.Equal(t, pid, s.PID(), "not closed for idle while the job runs")

	_, _ = log.waitFor(t, i+1, "the turn the CLI starts when the job ends", answerIs("The job finished."))
	assert.Equal(t, pid, s.PID(), "on the same process")
	require.Eventually(t, func() bool { return s.State() == StateExited }, 10*time.Second, 50*time.Millisecond,
		"once the job is over the CLI is idle again, and closes")
}

package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/tgfake"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// continueScript is the rig's script plus a model that, asked to continue
// after a restart, asks for the same Bash call again.
func continueScript() fakeapi.Script {
	s := script()
	again := fakeapi.Rule{Name: "continue-bash", When: fakeapi.Match{PromptContains: "Please continue where you left off",
		AnyUserContains: "BASHRUN", LastIsToolResult: fakeapi.Bool(false)},
		Replies: []fakeapi.Reply{fakeapi.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"})}}
	s.Rules = append([]fakeapi.Rule{again}, s.Rules...)
	return s
}

// A drain does not wait on a human: the approval-blocked turn stops at
// once, and after the restart ▶️ Continue resumes the session, the same
// tool is asked for again, and approving it runs it.
func TestDrainStopsApprovalWaitThenContinue(t *testing.T) {
	chat := tgfake.ChatID(alice)
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, continueScript()) },
		withConfig(func(c *config.Config) { c.Daemon.DrainTimeout = config.Duration(2 * time.Minute) }))
	r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	require.Eventually(t, func() bool { // the Continue button needs the message id on disk
		p, err := r.store.PendingApprovals(context.Background())
		return err == nil && len(p) == 1 && p[0].MessageID != 0
	}, wait, 10*time.Millisecond)

	start := time.Now()
	r.drain(2 * time.Minute)
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second, "a drain does not wait for a decision nobody makes")

	stopped := r.waitBot(chat, "approval with Continue", func(m tgfake.Message) bool {
		return m.ID == ap.ID && buttonData(m, "Continue") != ""
	})
	assert.Contains(t, stopped.Text, "restarted before anyone decided")
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt", "nothing ran without a decision")

	r.start()
	r.tg.UserPresses(chat, ap.ID, buttonData(stopped, "Continue"))
	again := r.waitBot(chat, "the same approval asked again", func(m tgfake.Message) bool {
		return m.ID != ap.ID && strings.Contains(m.Text, "echo hi > out.txt") && buttonData(m, "Approve") != ""
	})
	r.tg.UserPresses(chat, again.ID, buttonData(again, "Approve"))
	r.waitBot(chat, "answer after continuing", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "⏱")
	})
	got, err := readFile(r.claude.Workdir + "/out.txt")
	require.NoError(t, err, "approving after Continue runs the command")
	assert.Equal(t, "hi\n", got)

	calls := r.claude.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.True(t, last.AnyUserContains("BASHRUN please"), "the session resumed with its history")
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	assert.Empty(t, m.Keyboard, "Continue works once")
	assert.Contains(t, m.Text, "Continued after the restart")
}

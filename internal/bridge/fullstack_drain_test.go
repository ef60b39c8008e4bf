package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
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

// bashApprovalOnDisk asks for BASHRUN's Bash call and waits until its
// approval message is recorded, which a Continue button needs.
func (r *rig) bashApprovalOnDisk(chat telegramtest.ChatID) telegramtest.Message {
	r.t.Helper()
	r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	require.Eventually(r.t, func() bool {
		p, err := r.store.PendingApprovals(context.Background())
		return err == nil && len(p) == 1 && p[0].MessageID != 0
	}, wait, 10*time.Millisecond)
	return ap
}

// A drain does not wait on a human: the approval-blocked turn stops at
// once, and after the restart ▶️ Continue resumes the session, the same
// tool is asked for again, and approving it runs it.
func TestDrainStopsApprovalWaitThenContinue(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, continueScript()) },
		withConfig(func(c *config.Config) { c.Daemon.DrainTimeout = config.Duration(2 * time.Minute) }))
	ap := r.bashApprovalOnDisk(chat)

	start := time.Now()
	r.drain(2 * time.Minute)
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second, "a drain does not wait for a decision nobody makes")

	stopped := r.waitBot(chat, "approval with Continue", func(m telegramtest.Message) bool {
		return m.ID == ap.ID && buttonData(m, "Continue") != ""
	})
	assert.Contains(t, stopped.Text, "restarted before anyone decided")
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt", "nothing ran without a decision")
	r.saysTheRestartStoppedIt(chat)

	r.start()
	r.continueThenApprove(chat, ap, stopped)

	calls := r.claude.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.True(t, last.AnyUserContains("BASHRUN please"), "the session resumed with its history")
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	assert.Empty(t, m.Keyboard, "Continue works once")
	assert.Contains(t, m.Text, "Continued after the restart")
}

// After a crash, as after a drain, an approval whose CLI died offers
// ▶️ Continue: the session resumes, the same tool is asked for again, and
// approving it runs it (issue 24 §4).
func TestCrashMidApprovalThenContinue(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, continueScript()) })
	ap := r.bashApprovalOnDisk(chat)
	r.crash()
	r.start()
	stopped := r.waitBot(chat, "approval with Continue", func(m telegramtest.Message) bool {
		return m.ID == ap.ID && buttonData(m, "Continue") != ""
	})
	assert.Contains(t, stopped.Text, "killed or crashed")
	assert.Empty(t, buttonData(stopped, "Approve"), "its request died with the CLI")
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt")

	r.continueThenApprove(chat, ap, stopped)
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	assert.Empty(t, m.Keyboard, "Continue works once")
}

// TestContinueGoesBackToItsSession: after the restart the chat moved to
// another project before pressing ▶️ Continue. While Claude works there
// the press is refused and the button keeps working; once it is done,
// Continue switches the chat back to the session the approval was for
// (its project's directory and history) and asks Claude to go on there.
func TestContinueGoesBackToItsSession(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	beta := realDir(t)
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, continueScript()) },
		withProjects(map[string]config.Project{"beta": {Path: beta}},
			func(c *config.Config) { c.Daemon.DrainTimeout = config.Duration(2 * time.Minute) }))
	alpha := r.claude.Workdir
	ap := r.bashApprovalOnDisk(chat)
	r.drain(2 * time.Minute)
	stopped := r.waitBot(chat, "approval with Continue", func(m telegramtest.Message) bool {
		return m.ID == ap.ID && buttonData(m, "Continue") != ""
	})
	r.start()
	r.ask(chat, "hello after the restart") // the chat's CLI is up and idle again
	r.command(chat, "/project beta", "starts a new session")

	// Busy in beta: an approval waits there.
	r.say(chat, alice, "TOUCHONE in beta")
	busy := r.approvalMessage(chat, "touch made.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(stopped, "Continue"))
	require.Eventually(t, func() bool {
		for _, c := range r.tg.Snapshot().CallsOf("answerCallbackQuery") {
			if strings.Contains(c.Params["text"], "Claude is working in beta now: let it finish or /cancel first") {
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond)
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	assert.NotEmpty(t, buttonData(m, "Continue"), "a refused press leaves the button working")
	r.tg.UserPresses(chat, busy.ID, buttonData(busy, "Approve"))
	r.waitBot(chat, "beta's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "📁 beta")
	})
	require.FileExists(t, beta+"/made.txt")

	r.tg.UserPresses(chat, ap.ID, buttonData(stopped, "Continue"))
	back := r.waitBot(chat, "back in default", func(m telegramtest.Message) bool {
		return m.ReplyTo == ap.ID && strings.Contains(m.Text, "↩️ Resuming")
	})
	assert.Contains(t, back.Text, "This chat works in default")
	again := r.waitBot(chat, "the same approval asked again", func(m telegramtest.Message) bool {
		return m.ID != ap.ID && strings.Contains(m.Text, "echo hi > out.txt") && buttonData(m, "Approve") != ""
	})
	r.tg.UserPresses(chat, again.ID, buttonData(again, "Approve"))
	r.waitBot(chat, "answer after continuing", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "📁 default")
	})
	got, err := readFile(alpha + "/out.txt")
	require.NoError(t, err, "the command ran in default's directory")
	assert.Equal(t, "hi\n", got)
	assert.NoFileExists(t, beta+"/out.txt")
	calls := r.claude.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.True(t, last.AnyUserContains("BASHRUN please"), "default's session resumed with its history")
	assert.True(t, ranIn(last, alpha))
}

// saysTheRestartStoppedIt checks what the chat shows of a turn a drain
// stopped: the restart stopped it, and nothing says the user did.
func (r *rig) saysTheRestartStoppedIt(chat telegramtest.ChatID) {
	r.t.Helper()
	r.waitBot(chat, "the turn shown as stopped for a restart", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "Stopped for a restart")
	})
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		for _, lie := range []string{"Cancelled", "stopped by you", "⏹"} {
			assert.NotContains(r.t, m.Text, lie, "the user did not stop it: %q", m.Text)
		}
	}
}

// continueThenApprove presses ▶️ Continue on the stopped approval ap, waits
// for BASHRUN's Bash call to be asked for again, approves it, and checks
// that the command ran.
func (r *rig) continueThenApprove(chat telegramtest.ChatID, ap, stopped telegramtest.Message) {
	r.t.Helper()
	r.tg.UserPresses(chat, ap.ID, buttonData(stopped, "Continue"))
	again := r.waitBot(chat, "the same approval asked again", func(m telegramtest.Message) bool {
		return m.ID != ap.ID && strings.Contains(m.Text, "echo hi > out.txt") && buttonData(m, "Approve") != ""
	})
	r.tg.UserPresses(chat, again.ID, buttonData(again, "Approve"))
	r.waitBot(chat, "answer after continuing", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "⏱")
	})
	got, err := readFile(r.claude.Workdir + "/out.txt")
	require.NoError(r.t, err, "approving after Continue runs the command")
	assert.Equal(r.t, "hi\n", got)
}

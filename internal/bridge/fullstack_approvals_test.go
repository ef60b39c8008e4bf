package bridge_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// Full-stack tests of the approval audit log, Keep planning and /status.

// closedApproval waits until approval message id is closed with an outcome
// containing outcome, and returns it with the chat's only audit record.
func (r *rig) closedApproval(chat telegramtest.ChatID, id telegramtest.MessageID, outcome string) (telegramtest.Message, state.Approval) {
	r.t.Helper()
	m := r.waitBot(chat, outcome+" approval", func(m telegramtest.Message) bool {
		return m.ID == id && len(m.Keyboard) == 0 && strings.Contains(m.Text, outcome)
	})
	log, err := r.store.ApprovalLog(context.Background(), state.ChatKey{Chat: state.ChatID(alice)}, 0)
	require.NoError(r.t, err)
	require.Len(r.t, log, 1)
	return m, log[0]
}

// pressWhileBlocked asks for a Bash approval, then presses Approve while
// the chat's actor is blocked, so the press waits in its mailbox until
// release. pid is the chat's CLI.
func (r *rig) pressWhileBlocked(key state.ChatKey) (ap telegramtest.Message, pid int, release func()) {
	r.t.Helper()
	chat := telegramtest.ChatID(key.Chat)
	r.say(chat, alice, "BASHRUN please")
	ap = r.approvalMessage(chat, "out.txt")
	pid = r.b.ChatPID(key)
	require.NotZero(r.t, pid)
	release = r.b.BlockChat(key)
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	require.Eventually(r.t, func() bool { return r.b.MailboxUpdates(key) == 1 }, wait, 10*time.Millisecond, "the press waits in the mailbox")
	return ap, pid, release
}

// TestAuditPressAfterWithdrawal: the CLI's process ends (and with it the
// request) while a press waits in the chat's mailbox. The press decides
// nothing: the log and the message say "withdrawn", not "allow".
func TestAuditPressAfterWithdrawal(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	ap, pid, release := r.pressWhileBlocked(key)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return r.b.ChatProcessState(key) == runner.StateExited }, wait, 10*time.Millisecond,
		"the runner saw the process end and dropped its request")
	release()

	m, rec := r.closedApproval(chat, ap.ID, "Withdrawn")
	assert.NotContains(t, m.Text, "by @alice", "nobody decided a withdrawn request")
	assert.Equal(t, state.DecisionWithdrawn, rec.Decision, "the log does not claim an approval Claude never got")
	assert.Zero(t, rec.DecidedBy)
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt")
}

// TestAuditUndeliverableAnswer: the CLI's stdin is closed (as idle eviction
// or a restart closes it) while a press waits. The answer cannot be written,
// and both the message and the log say Claude could not be reached.
func TestAuditUndeliverableAnswer(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	// Once its stdin is closed the CLI fails the permission and asks the
	// model again; that call hangs, so the process stays alive (and the
	// request open on our side) until CloseProcess gives up on it.
	hang := fakeapi.Rule{Name: "after-stdin-closed", When: fakeapi.Match{PromptContains: "stream closed"},
		Replies: []fakeapi.Reply{fakeapi.Hang()}}
	r := newRig(t, func(r *rig) {
		r.claude = claudetest.New(r.t, fakeapi.Script{Rules: append([]fakeapi.Rule{hang}, script().Rules...)})
	})
	ap, pid, release := r.pressWhileBlocked(key)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	closed := r.b.CloseChatProcess(ctx, key)
	_, err := r.claude.API.WaitFor(ctx, func(reqs []fakeapi.Request) bool {
		for _, q := range reqs {
			if q.Rule == hang.Name {
				return true
			}
		}
		return false
	})
	require.NoError(t, err, "the CLI saw its stdin close")
	release()

	m, rec := r.closedApproval(chat, ap.ID, "Could not reach Claude")
	assert.Contains(t, m.Text, "Approved", "says what was chosen")
	assert.Equal(t, state.DecisionInterrupted, rec.Decision, "not allow: Claude never got it")
	assert.Contains(t, rec.Note, "could not reach Claude")
	assert.Contains(t, rec.Note, "chosen: allow")
	assert.Equal(t, state.UserID(alice), rec.DecidedBy)
	_ = syscall.Kill(pid, syscall.SIGKILL) // no need to wait out the hung model call
	select {
	case <-closed:
	case <-ctx.Done():
		t.Error("the CLI was not closed")
	}
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt")
}

// TestAuditRecordsWhoDecided: a delivered decision is logged with its user.
func TestAuditRecordsWhoDecided(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "out.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Deny"))
	r.finalAnswer(chat, in.ID, "The command ran.")
	m, rec := r.closedApproval(chat, ap.ID, "Denied")
	assert.Equal(t, state.DecisionDeny, rec.Decision)
	assert.Equal(t, state.UserID(alice), rec.DecidedBy)
	assert.Contains(t, m.Text, "Denied by @alice")
}

// TestKeepPlanning: in plan mode, "Keep planning" refuses ExitPlanMode with
// a request to revise; the model gets it, plans again and asks again.
func TestKeepPlanning(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.PermissionMode = config.PermissionPlan }))
	in := r.say(chat, alice, "PLANIT a button")
	first := r.approvalMessage(chat, "Colour it blue")
	r.tg.UserPresses(chat, first.ID, buttonData(first, "Keep planning"))

	second := r.waitBot(chat, "the plan asked for again", func(m telegramtest.Message) bool {
		return m.ID > first.ID && strings.Contains(m.Text, "Plan ready for review") && buttonData(m, "Approve plan") != ""
	})
	calls := r.claude.API.ModelCalls()
	results := calls[len(calls)-1].ToolResults()
	require.NotEmpty(t, results)
	refusal := results[len(results)-1]
	assert.True(t, refusal.IsError, "ExitPlanMode was refused")
	assert.Contains(t, refusal.Text, "keep planning; revise the plan", "the model was asked to revise")
	r.tg.UserPresses(chat, second.ID, buttonData(second, "Approve plan"))
	r.finalAnswer(chat, in.ID, "Plan approved; starting work.")
	m, _ := r.tg.Snapshot().Message(chat, first.ID)
	assert.Empty(t, m.Keyboard)
	assert.Contains(t, m.Text, "by @alice")
}

// TestStatusListsPendingApprovals: /status names what waits for the user,
// and stops once it is decided.
func TestStatusListsPendingApprovals(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "out.txt")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Pending approvals: 1")
	assert.Contains(t, status.Text, "• Bash: echo hi > out.txt · waiting")

	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.finalAnswer(chat, in.ID, "The command ran.")
	st2 := r.say(chat, alice, "/status")
	status2 := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st2.ID })
	assert.NotContains(t, status2.Text, "Pending approvals")
	assert.NotContains(t, status2.Text, "echo hi")
}

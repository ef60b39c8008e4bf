package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// A scheduled run that fires while the chat is busy waits for the chat's
// turn to end. When untether stops during that wait (here a crash, with
// the turn blocked on an approval), the run is not lost: the next start
// runs it, once.
func TestScheduledRunWaitingForABusyChatSurvivesACrash(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	clock := timeshift.New(time.Now())
	r := newRig(t, func(r *rig) { r.clock = clock })
	r.say(chat, alice, "BASHRUN please")
	r.approvalMessage(chat, "echo hi > out.txt") // busy until someone decides
	in := r.say(chat, alice, "/at 1m FILE waited")
	r.botReply(chat, in, "Scheduled #")
	clock.Advance(2 * time.Minute)
	require.Eventually(t, func() bool {
		runs, err := r.store.PendingScheduleRuns(context.Background())
		return err == nil && len(runs) == 1
	}, wait, 20*time.Millisecond, "the run fired and waits for the chat")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "FILE waited"), "not while the chat is busy")

	r.crash()
	r.start()
	r.waitBot(chat, "the run that waited", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: FILE waited") && strings.Contains(m.Text, "⏱")
	})
	require.Eventually(t, func() bool {
		runs, err := r.store.PendingScheduleRuns(context.Background())
		return err == nil && len(runs) == 0
	}, wait, 20*time.Millisecond, "no longer pending once the CLI has it")
	r.stop()
	r.start() // a further restart does not run it again
	again := r.say(chat, alice, "after the restart")
	r.finalAnswer(chat, again.ID, "echo: after the restart")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "FILE waited"), "run once")
}

// retryWaitingForBusyChat sets up a retry after a limit, rejected in
// project beta, that fires while the chat is busy in default (a turn
// waiting for an approval), so it waits for the chat: the retry is firing.
// It returns the prompt, the limit's notice and beta's directory.
func retryWaitingForBusyChat(t *testing.T) (r *rig, in, notice telegramtest.Message, beta string) {
	t.Helper()
	chat := telegramtest.ChatID(alice)
	beta = realDir(t)
	clock := timeshift.New(time.Now())
	reset := time.Now().Add(time.Hour)
	r = newRig(t, func(r *rig) {
		r.clock = clock
		r.claude = claudetest.New(r.t, limitScript(map[string]time.Time{"LIMITED": reset}),
			claudetest.WithOAuthToken("sk-ant-oat01-fake"))
	}, withProjects(map[string]config.Project{"beta": {Path: beta}}, func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Claude.RetryAfterLimit = config.RetryAuto
	}))
	r.command(chat, "/project beta", "starts a new session")
	in = r.say(chat, alice, "LIMITED in beta")
	notice = r.waitBot(chat, "the limit's notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "will be sent again")
	})
	r.command(chat, "/project default", "default")
	r.say(chat, alice, "BASHRUN please")
	r.approvalMessage(chat, "echo hi > out.txt") // busy in default until someone decides

	clock.Advance(time.Hour)
	require.Eventually(t, func() bool {
		rs, err := r.store.FiringRetries(context.Background())
		return err == nil && len(rs) == 1
	}, wait, 20*time.Millisecond, "the retry fired and waits for the chat")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "LIMITED in beta"), "not sent while the chat is busy elsewhere")
	return r, in, notice, beta
}

// A retry after a limit that must go back to its project while the chat
// is busy elsewhere waits for the chat; a crash during that wait does not
// lose it: after the restart it goes back to its project and is sent, once.
func TestLimitRetryWaitingForABusyChatSurvivesACrash(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r, in, _, beta := retryWaitingForBusyChat(t)
	r.crash()
	r.start()
	r.finalAnswer(chat, in.ID, "echo: LIMITED in beta")
	var dirs []bool
	for _, c := range r.claude.API.ModelCalls() {
		if c.LastPrompt() == "LIMITED in beta" {
			dirs = append(dirs, ranIn(c, beta))
		}
	}
	assert.Equal(t, []bool{true, true}, dirs, "both tries ran in beta")
	require.Eventually(t, func() bool {
		rs, err := r.store.FiringRetries(context.Background())
		return err == nil && len(rs) == 0
	}, wait, 20*time.Millisecond, "sent, no longer firing")
}

// ✖️ Drop pressed while a fired retry waits for the busy chat stops it: the
// notice says so, and when the chat is free the prompt is not sent.
func TestLimitRetryDroppedWhileItWaitsIsNeverSent(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r, _, notice, _ := retryWaitingForBusyChat(t)
	r.tg.UserPresses(chat, notice.ID, buttonData(notice, "Drop"))
	r.waitBot(chat, "the notice says dropped", func(m telegramtest.Message) bool {
		return m.ID == notice.ID && strings.Contains(m.Text, "will not be sent again")
	})
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.waitBot(chat, "the busy turn's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "⏱")
	})
	require.Eventually(t, func() bool {
		return len(r.logLines("not sending a prompt again after its limit: it was dropped while it waited")) == 1
	}, wait, 20*time.Millisecond, "the waiting retry looked again once the chat was free")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "LIMITED in beta"), "never sent again")
	rs, err := r.store.FiringRetries(context.Background())
	require.NoError(t, err)
	assert.Empty(t, rs)
}

// A retry whose kept prompt cannot be read is not dropped in silence: the
// chat is told to send it again, and the retry ends.
func TestLimitRetryWithAnUnreadablePromptSaysSo(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	clock := timeshift.New(time.Now())
	r := newRig(t, func(r *rig) { r.clock = clock })
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	require.NoError(t, r.store.PutRetry(context.Background(), state.Retry{Token: "bad", Key: key, ReplyTo: state.MessageID(in.ID),
		Input: []byte("{not json"), Label: "the lost words", ResetsAt: clock.Now().Add(time.Minute), State: state.RetryScheduled}))
	clock.Advance(2 * time.Hour) // past the scheduler's longest sleep
	r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "“the lost words” could not be sent again after the limit") &&
			strings.Contains(m.Text, "Please send it again.")
	})
	got, err := r.store.GetRetry(context.Background(), "bad")
	require.NoError(t, err)
	assert.Equal(t, state.RetryDropped, got.State)
}

// A schedule of a chat the operator no longer allows (a reload took its
// user off the allow-list) does not run when it fires, and is not left
// pending to run after a restart either.
func TestScheduleOfAChatNoLongerAllowedDoesNotRun(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	clock := timeshift.New(time.Now())
	r := newRig(t, func(r *rig) { r.clock = clock })
	in := r.say(chat, alice, "/at 1m FILE not allowed any more")
	r.botReply(chat, in, "Scheduled #")
	cfg := *r.b.Config()
	cfg.Telegram.AllowedUserIDs = []int64{int64(bob)}
	r.b.Reload(&cfg)
	clock.Advance(2 * time.Minute)
	require.Eventually(t, func() bool {
		return len(r.logLines("not running a scheduled prompt: the chat is no longer allowed")) == 1
	}, wait, 20*time.Millisecond)
	runs, err := r.store.PendingScheduleRuns(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs, "not pending either")
	r.stop()
	r.start()
	chatB := r.addPrivateChat(bob, "Bob")
	b := r.say(chatB, bob, "still here")
	r.finalAnswer(chatB, b.ID, "echo: still here")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "FILE not allowed any more"))
}

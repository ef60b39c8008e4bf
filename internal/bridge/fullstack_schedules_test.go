package bridge_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// botReply waits for the bot's reply to a message that contains want.
func (r *rig) botReply(chat telegramtest.ChatID, to telegramtest.Message, want string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "reply containing "+want, func(m telegramtest.Message) bool {
		return m.ReplyTo == to.ID && strings.Contains(m.Text, want)
	})
}

// /at and /every store schedules that survive a restart; /schedules lists
// them with 🗑 Delete; a run is a turn marked ⏰ scheduled in its progress
// and answer; a [[schedules]] run missed while the daemon was down runs
// once at start, in a fresh session when the entry says so.
func TestSchedulesRunAndSurviveRestarts(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	clock := timeshift.New(day.Add(8*time.Hour + 20*time.Minute)) // 08:20 UTC
	r := newRig(t, func(r *rig) { r.clock = clock }, withConfig(func(c *config.Config) {
		c.Telegram.Timezone = "UTC"
		c.Schedules = []config.Schedule{{Chat: int64(alice), Cron: "0 9 * * *", Prompt: "FILE morning", FreshSession: true}}
	}))

	at := r.say(chat, alice, "/at 30m STEADY scheduled")
	r.botReply(chat, at, "Next run: 08:50 UTC (in 30m)")
	every := r.say(chat, alice, `/every “30 8 * * *” EVERYDAY`) // a phone's quotes
	everyID := regexp.MustCompile(`#\d+`).FindString(r.botReply(chat, every, "Next run: 08:30 UTC (in 10m)").Text)
	ls := r.say(chat, alice, "/schedules")
	list := r.botReply(chat, ls, "Scheduled prompts")
	assert.Contains(t, list.Text, "cron 0 9 * * * (config file)")
	assert.Contains(t, list.Text, "FILE morning")
	require.Len(t, list.Keyboard, 1)
	require.Len(t, list.Keyboard[0], 2, "a Delete button per schedule the chat made, none for the file's")
	r.tg.UserPresses(chat, list.ID, buttonData(list, "Delete "+everyID))
	r.waitBot(chat, "the list without it", func(m telegramtest.Message) bool {
		return m.ID == list.ID && !strings.Contains(m.Text, "EVERYDAY") && strings.Contains(m.Text, "STEADY") && len(m.Keyboard) == 1 && len(m.Keyboard[0]) == 1
	})
	r.waitBot(chat, "deleted", func(m telegramtest.Message) bool {
		return m.ReplyTo == list.ID && strings.Contains(m.Text, "🗑 Deleted #")
	})

	r.stop()
	r.start()
	clock.Advance(31 * time.Minute) // 08:51: the /at runs (the deleted 08:30 does not)
	r.waitBot(chat, "progress marked scheduled", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "⏰ scheduled #") && buttonData(m, "Cancel") != "" // the text streams as a draft
	})
	answer := r.waitBot(chat, "scheduled answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "⏱") && strings.Contains(m.Text, "steady words")
	})
	assert.Contains(t, answer.Text, "⏰ scheduled #2 (once): STEADY scheduled")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "EVERYDAY"), "a deleted schedule does not run")

	before, err := r.store.GetChat(context.Background(), key)
	require.NoError(t, err)
	r.stop()
	clock.Advance(10 * time.Minute) // 09:01: the file's 09:00 run was missed while down
	r.start()
	file := r.waitBot(chat, "the missed run, caught up at start", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: FILE morning") && strings.Contains(m.Text, "⏱")
	})
	assert.Contains(t, file.Text, "⏰ scheduled #1 (cron 0 9 * * *): FILE morning")
	for _, c := range r.claude.API.ModelCalls() {
		if c.LastPrompt() == "FILE morning" {
			assert.False(t, c.AnyUserContains("STEADY scheduled"), "fresh_session: the run starts without the chat's history")
		}
	}
	after, err := r.store.GetChat(context.Background(), key)
	require.NoError(t, err)
	assert.NotEqual(t, before.SessionID, after.SessionID, "fresh_session: a new session")
	list2, err := r.store.ChatSchedules(context.Background(), key)
	require.NoError(t, err)
	require.Len(t, list2, 1, "the one-off is done")
	assert.True(t, list2[0].NextRun.Equal(day.Add(33*time.Hour)), "the file's schedule runs next tomorrow at 09:00, not again now: %s", list2[0].NextRun)
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "FILE morning"), "caught up once")
}

// A scheduled turn is a turn like any other: its approvals ask the chat
// (and the approved tool runs); /schedules pause holds every schedule and
// /schedules resume runs what came due meanwhile, once; the chat's limit
// on schedules holds.
func TestScheduledApprovalPauseAndLimit(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	clock := timeshift.New(time.Now())
	r := newRig(t, func(r *rig) { r.clock = clock }, withConfig(func(c *config.Config) {
		c.Scheduler.MaxPerChat = 2
	}))
	in := r.say(chat, alice, "/at 1m BASHRUN please")
	r.botReply(chat, in, "Scheduled #")
	clock.Advance(2 * time.Minute)
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	answer := r.waitBot(chat, "answer after approval", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The command ran.") && strings.Contains(m.Text, "⏱")
	})
	assert.Contains(t, answer.Text, "⏰ scheduled #")
	got, err := readFile(r.claude.Workdir + "/out.txt")
	require.NoError(t, err, "the approved command ran")
	assert.Equal(t, "hi\n", got)

	p := r.say(chat, alice, "/schedules pause")
	r.botReply(chat, p, "paused")
	in = r.say(chat, alice, "/at 1m PAUSED x")
	r.botReply(chat, in, "Schedules are paused")
	in = r.say(chat, alice, "/at 2h LATER y")
	r.botReply(chat, in, "Scheduled #")
	in = r.say(chat, alice, "/at 3h THIRD z")
	r.botReply(chat, in, "the most it may have")
	clock.Advance(5 * time.Minute)
	hi := r.say(chat, alice, "meanwhile")
	r.finalAnswer(chat, hi.ID, "echo: meanwhile")
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "PAUSED x"), "nothing runs while paused")

	res := r.say(chat, alice, "/schedules resume")
	r.botReply(chat, res, "run again")
	r.waitBot(chat, "the held run", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: PAUSED x") && strings.Contains(m.Text, "⏰ scheduled #")
	})
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "PAUSED x"))
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "LATER y"), "not due yet")
}

// TestScheduledRunsGoInDueOrder: two runs that come due while the chat is
// busy go in the order they came due once it is free, each in a turn of
// its own, and a third that comes due as the chat is freed goes after
// them. The chat frees as its CLI dies mid-turn,
// which lets the waiting runs go at once, so the third seldom finds the
// chat free with runs still waiting: this checks the order more than it
// can catch an overtaking run.
func TestScheduledRunsGoInDueOrder(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	clock := timeshift.New(time.Now())
	r := newRig(t, func(r *rig) { r.clock = clock })
	prompts := []string{"run due first", "run due second", "run due third"}
	for i, p := range prompts {
		at := r.say(chat, alice, fmt.Sprintf("/at %dm %s", i+1, p))
		r.botReply(chat, at, fmt.Sprintf("Scheduled #%d", i+1))
	}
	pending := func(n int, why string) {
		t.Helper()
		require.Eventually(t, func() bool {
			runs, err := r.store.PendingScheduleRuns(context.Background())
			return err == nil && len(runs) == n
		}, wait, 20*time.Millisecond, why)
	}

	in := r.say(chat, alice, "SLOW please") // about 9s of streaming
	r.streaming(chat, in.ID, "slow answer")
	clock.Advance(time.Minute + time.Second)
	pending(1, "the first run came due and waits for the busy chat")
	clock.Advance(time.Minute)
	pending(2, "the second too, behind it")
	pid := r.b.ChatPID(key)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	r.waitBot(chat, "crash notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "stopped unexpectedly")
	})
	clock.Advance(time.Minute) // the third comes due

	for i, p := range prompts {
		answer := r.waitBot(chat, "the answer to "+p, func(m telegramtest.Message) bool {
			return strings.Contains(m.Text, "echo: "+p) && strings.Contains(m.Text, "⏱")
		})
		assert.Contains(t, answer.Text, fmt.Sprintf("⏰ scheduled #%d (once): %s", i+1, p))
	}
	r.settled("after the runs")
	r.reachedClaudeOnceInOrder(prompts...)
	pending(0, "no run is left pending once each reached the CLI")
}

// TestWaitingRunsOfBothKindsGoOldestFirst: a webhook run that came while
// the chat was busy goes before a scheduled run that came due after it,
// though the schedules module registers first: both wait in the chat's one
// queue. With a queue per module, each module's look at the turn's end
// would run in the modules' order, the scheduled run first.
func TestWaitingRunsOfBothKindsGoOldestFirst(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	clock := timeshift.New(time.Now())
	r := newRig(t, withOps(ciTrigger), func(r *rig) { r.clock = clock })
	waitReady(r)
	at := r.say(chat, alice, "/at 1m run due after the webhook")
	r.botReply(chat, at, "Scheduled #1")

	in := r.say(chat, alice, "SLOW please") // about 9s of streaming
	r.streaming(chat, in.ID, "slow answer")
	hook := r.ciFailedOn("fix/first", "d-1")
	clock.Advance(time.Minute + time.Second)
	require.Eventually(t, func() bool {
		runs, err := r.store.PendingScheduleRuns(context.Background())
		return err == nil && len(runs) == 1
	}, wait, 20*time.Millisecond, "the scheduled run came due and waits")
	r.finalAnswer(chat, in.ID, "slow answer")

	prompts := []string{hook, "run due after the webhook"}
	for _, p := range prompts {
		r.waitBot(chat, "the answer to "+p, func(m telegramtest.Message) bool {
			return strings.Contains(m.Text, "echo: "+p) && strings.Contains(m.Text, "⏱")
		})
	}
	r.settled("after the runs")
	r.reachedClaudeOnceInOrder(prompts...)
}

package bridge_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// Wake-ups Claude sets for itself (issue 24 §1), with the real CLI:
// a wake-up keeps its CLI waiting until it fires and its turn reaches the
// chat, headed with why it came; /status lists it; a close the user or
// the operator asked for (a restart, /new, a switch) or a crash tells the
// chat it stopped (a ScheduleWakeup will not fire; a CronCreate job comes
// back only with its session) and offers ▶️ Re-arm, which asks Claude, in the
// session it was set in, to set it again.

// fireWait bounds the wait for a cron job's fire: it fires at the start
// of the next minute.
const fireWait = 100 * time.Second

const rearmMarker = "[untether: ▶️ Re-arm]"

// wakeupRules: WAKEONCE sets a one-shot cron job for the next minute,
// WAKEYEARLY a recurring one for New Year, WAKELATER a ScheduleWakeup in
// 30 minutes; a fire ("WOKEN …") answers "Woke up."; Re-arm's prompt sets
// the ScheduleWakeup again, or for a cron job calls CronList first. The later
// turns' rules come first: a ToolTurn's second rule matches any request
// whose history holds its marker.
func wakeupRules() []fakeapi.Rule {
	rules := fakeapi.ToolTurn("call CronList first", "CronList", map[string]any{}, "Listed; the job is back.")
	rules = append(rules, fakeapi.ToolTurn(rearmMarker, "ScheduleWakeup",
		map[string]any{"delaySeconds": 1800, "reason": "check later", "prompt": "WOKEN later"}, "Re-armed.")...)
	rules[3].When.PromptContains, rules[3].When.LastIsToolResult = rearmMarker, fakeapi.Bool(false)
	rules = append(rules, fakeapi.Rule{Name: "woken", When: fakeapi.Match{PromptContains: "WOKEN"},
		Replies: []fakeapi.Reply{fakeapi.Text("Woke up.")}})
	rules = append(rules, fakeapi.ToolTurn("WAKEONCE", "CronCreate",
		map[string]any{"cron": "* * * * *", "prompt": "WOKEN check the build", "recurring": false}, "Armed the job.")...)
	rules = append(rules, fakeapi.ToolTurn("WAKEYEARLY", "CronCreate",
		map[string]any{"cron": "0 0 1 1 *", "prompt": "WOKEN new year", "recurring": true}, "Armed the yearly job.")...)
	rules = append(rules, fakeapi.ToolTurn("WAKELATER", "ScheduleWakeup",
		map[string]any{"delaySeconds": 1800, "reason": "check later", "prompt": "WOKEN later"}, "Armed the wake-up.")...)
	return rules
}

// statusText sends /status and returns the bot's reply.
func (r *rig) statusText(chat telegramtest.ChatID) string {
	r.t.Helper()
	st := r.say(chat, alice, "/status")
	return r.waitBot(chat, "/status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID }).Text
}

// waitingFor waits until the chat's CLI waits for background work.
func (r *rig) waitingFor(key state.ChatKey) {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return r.b.ChatState(key) == "waiting_background" }, wait, 20*time.Millisecond)
}

// armLater sets the 30-minute ScheduleWakeup and waits until the CLI waits
// for it; it returns the session.
func (r *rig) armLater(chat telegramtest.ChatID, key state.ChatKey) string {
	r.t.Helper()
	in := r.say(chat, alice, "WAKELATER please")
	r.finalAnswer(chat, in.ID, "Armed the wake-up.")
	r.waitingFor(key)
	return r.sessionOf(key)
}

// lostNotice waits for the notice that the wake-up will not fire.
func (r *rig) lostNotice(chat telegramtest.ChatID, why string) telegramtest.Message {
	r.t.Helper()
	m := r.waitBot(chat, "the lost wake-up's notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "stopped with it") && buttonData(m, "Re-arm") != ""
	})
	assert.Contains(r.t, m.Text, "Claude's process was closed ("+why+"), and the wake-up Claude had set stopped with it:")
	assert.Regexp(r.t, `⏰ a wake-up .*: check later — it will not fire`, m.Text)
	return m
}

// rearm presses ▶️ Re-arm on notice and checks that Claude was asked, in
// session sid, to set the wake-up again, and did: its CLI waits for it.
func (r *rig) rearm(chat telegramtest.ChatID, key state.ChatKey, notice telegramtest.Message, sid string) {
	r.t.Helper()
	r.press(chat, notice.ID, "Re-arm")
	r.waitBot(chat, "the press's answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == notice.ID && strings.Contains(m.Text, "asked Claude to set a wake-up")
	})
	r.waitBot(chat, "Claude's answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == notice.ID && strings.Contains(m.Text, "Re-armed.") && strings.Contains(m.Text, "⏱")
	})
	var call fakeapi.Request
	for _, c := range r.claude.API.ModelCalls() {
		if strings.Contains(c.LastPrompt(), rearmMarker) {
			call = c
		}
	}
	require.NotEmpty(r.t, call.Body, "Claude was asked")
	assert.True(r.t, call.AnyUserContains("WAKELATER please"), "in the session the wake-up was set in")
	assert.Regexp(r.t, `call ScheduleWakeup with delaySeconds 1[5-8]\d\d, reason "check later" and this prompt, verbatim: "WOKEN later"`,
		call.LastPrompt(), "at the time it was due")
	assert.Equal(r.t, sid, r.sessionOf(key))
	r.waitingFor(key)
	assert.Contains(r.t, r.statusText(chat), "⏰ a wake-up ", "/status shows it armed again")

	q := r.tg.UserPresses(chat, notice.ID, buttonData(notice, "Re-arm"))
	assert.Contains(r.t, r.answerOf(q).Text, "re-armed already", "Re-arm works once")
}

// A wake-up keeps its CLI past idle_timeout until it fires; the turn it
// starts reaches the chat, headed with the wake-up; then the CLI may close.
func TestAWakeupFiresAndItsTurnReachesTheChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()), withConfig(func(c *config.Config) {
		c.Claude.IdleTimeout = config.Duration(time.Second)
	}))
	in := r.say(chat, alice, "WAKEONCE please")
	r.finalAnswer(chat, in.ID, "Armed the job.")
	pid := r.b.ChatPID(key)
	r.waitingFor(key)
	status := r.statusText(chat)
	assert.Contains(t, status, "⏰ a job ")
	assert.Contains(t, status, ": WOKEN check the build")
	time.Sleep(1500 * time.Millisecond) // past idle_timeout
	assert.Equal(t, pid, r.b.ChatPID(key), "not closed for idle while the wake-up is pending")

	own := r.tg.WaitForBotMessage(fireWait, chat, "the fired turn's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "Woke up.") && strings.Contains(m.Text, "⏱")
	})
	assert.True(t, strings.HasPrefix(own.Text, "⏰ Woken up by the job Claude set: WOKEN check the build"),
		"headed with why it came: %q", own.Text)
	assert.Equal(t, pid, r.b.ChatPID(key), "the same CLI fired it")
	assert.Empty(t, r.logLines("closing idle CLI process"), "never idle-closed before it fired")
	require.Eventually(t, func() bool { return len(r.logLines("closing idle CLI process")) > 0 }, wait, 50*time.Millisecond,
		"with nothing left to wait for, the CLI is idle again and closes")
}

// A restart's close loses the wake-up: after it, the chat is told it will
// not fire, and ▶️ Re-arm (a button that works after the restart) asks
// Claude to set it again.
func TestARestartLosesAWakeupAndReArmSetsItAgain(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()))
	sid := r.armLater(chat, key)
	assert.Contains(t, r.statusText(chat), "⏰ a wake-up ")
	r.stop()
	r.start()
	notice := r.lostNotice(chat, "untether restarted")
	r.rearm(chat, key, notice, sid)
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		assert.Equal(t, m.ID == notice.ID, strings.Contains(m.Text, "stopped with it"), "told once: %q", m.Text)
	}
}

// /new closes the CLI with its wake-up: Re-arm goes back to the session
// the wake-up was set in.
func TestNewLosesAWakeupAndReArmGoesBackToItsSession(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()))
	sid := r.armLater(chat, key)
	r.command(chat, "/new", "New session")
	notice := r.lostNotice(chat, "/new")
	assert.Empty(t, r.sessionOf(key))
	r.rearm(chat, key, notice, sid)
	assert.NotEmpty(t, r.waitBot(chat, "the way back", func(m telegramtest.Message) bool {
		return m.ReplyTo == notice.ID && strings.Contains(m.Text, "↩️ Resuming")
	}))
}

// A project switch closes the CLI with its wake-up; Re-arm switches back.
func TestASwitchLosesAWakeup(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()), withProjects(map[string]config.Project{"beta": {Path: realDir(t)}}))
	sid := r.armLater(chat, key)
	r.command(chat, "/project beta", "starts a new session")
	notice := r.lostNotice(chat, "switched to beta")
	r.rearm(chat, key, notice, sid)
	rec := r.storedChat(key)
	assert.Equal(t, "default", rec.Project, "back where the wake-up was set")
}

// A CLI that dies between turns takes its wake-up with it; the chat is
// told, and offered Re-arm.
func TestACrashedCLILosesItsWakeup(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()))
	sid := r.armLater(chat, key)
	require.NoError(t, syscall.Kill(r.b.ChatPID(key), syscall.SIGKILL))
	notice := r.lostNotice(chat, "it exited unexpectedly")
	r.rearm(chat, key, notice, sid)
}

// A session's CronCreate job comes back when the session resumes (the
// real CLI restores it): Re-arm resumes the session and Claude's CronList
// shows the job, which the CLI then waits for again.
func TestReArmOfACronJobFindsItBackAfterTheResume(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()))
	in := r.say(chat, alice, "WAKEYEARLY please")
	r.finalAnswer(chat, in.ID, "Armed the yearly job.")
	r.waitingFor(key)
	sid := r.sessionOf(key)
	r.command(chat, "/new", "New session")
	notice := r.waitBot(chat, "the lost job's notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "stopped with it") && buttonData(m, "Re-arm") != ""
	})
	assert.Contains(t, notice.Text, "⏰ a recurring job (0 0 1 1 *): WOKEN new year — it fires again only while Claude's process runs this session again")
	r.press(chat, notice.ID, "Re-arm")
	r.waitBot(chat, "Claude's answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == notice.ID && strings.Contains(m.Text, "Listed; the job is back.") && strings.Contains(m.Text, "⏱")
	})
	var call fakeapi.Request
	for _, c := range r.claude.API.ModelCalls() {
		if strings.Contains(c.LastPrompt(), rearmMarker) {
			call = c
		}
	}
	assert.True(t, call.AnyUserContains("WAKEYEARLY please"), "in the session the job was set in")
	assert.Contains(t, call.LastPrompt(), `(cron "0 0 1 1 *", recurring true, prompt "WOKEN new year")`)
	assert.Equal(t, sid, r.sessionOf(key))
	r.waitingFor(key)
	assert.Contains(t, r.statusText(chat), "⏰ a recurring job (0 0 1 1 *), next ")
}

// A restart's close stops a background job too, and the chat is told so.
func TestARestartSaysTheBackgroundJobStopped(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(fakeapi.ToolTurn("BGJOB", "Bash", map[string]any{
		"command": "sleep 60; echo job-done", "run_in_background": true, "description": "slow job"}, "Started it.")),
		withConfig(func(c *config.Config) { c.Claude.StopTimeout = config.Duration(time.Second) }))
	in := r.say(chat, alice, "BGJOB please")
	r.finalAnswer(chat, in.ID, "Started it.")
	r.waitingFor(key)
	r.stop()
	r.start()
	<-r.ready
	r.waitBot(chat, "the stopped job named", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "Claude's process was closed (untether restarted) while it still had work in the background: "+
			"its background task stopped with it")
	})
}

// A daemon that is killed takes its CLIs and their wake-ups with it, and
// can tell nobody: the next start does, from the wake-ups it kept as
// pending, and offers Re-arm.
func TestADaemonKillLosesAWakeupAndTheNextStartSaysSo(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(wakeupRules()))
	sid := r.armLater(chat, key)
	r.crash()
	r.start()
	notice := r.lostNotice(chat, "untether was killed or crashed")
	r.rearm(chat, key, notice, sid)
}

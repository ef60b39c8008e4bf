package bridge_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// cliDir is the working directory of the chat's live CLI.
func (r *rig) cliDir(key state.ChatKey) string {
	r.t.Helper()
	pid := r.b.ChatPID(key)
	require.NotZero(r.t, pid)
	dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	require.NoError(r.t, err)
	return dir
}

// TestConfigChangesReachExistingChats: a chat that chose nothing follows
// the config; a restart with another mode, model and workdir reaches it
// (the record used to freeze the values of its first message).
func TestConfigChangesReachExistingChats(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	in := r.say(chat, alice, "remember MANGO")
	r.finalAnswer(chat, in.ID, "echo: remember MANGO")
	session := r.sessionOf(key)
	stored := r.storedChat(key)
	assert.Empty(t, stored.PermissionMode+stored.Model+stored.Workdir, "nothing copied from the config")

	other := t.TempDir()
	r.stop()
	r.mutate = func(c *config.Config) {
		c.Claude.PermissionMode = config.PermissionPlan
		c.Claude.Model = "claude-haiku-4-5"
		c.Claude.Workdir = other
	}
	r.start()
	again := r.say(chat, alice, "and now?")
	r.finalAnswer(chat, again.ID, "echo: and now?")
	args := r.cliArgs(key)
	assert.Equal(t, "plan", flagValue(args, "--permission-mode"))
	assert.Contains(t, args, "--model=claude-haiku-4-5")
	assert.Equal(t, other, r.cliDir(key))
	assert.Equal(t, "claude-haiku-4-5", r.lastModel("and now?"))
	assert.Equal(t, session, r.sessionOf(key), "the same conversation, resumed")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Mode: plan")
	assert.Contains(t, status.Text, "Model: claude-haiku-4-5")
}

func TestModeChoiceSurvivesARestart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	md := r.say(chat, alice, "/mode acceptEdits")
	r.waitBot(chat, "switched", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
	r.stop()
	r.mutate = func(c *config.Config) { c.Claude.PermissionMode = config.PermissionPlan }
	r.start()
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	assert.Equal(t, "acceptEdits", flagValue(r.cliArgs(key), "--permission-mode"), "the chat's choice wins over the config")
}

// TestApprovedPlanThenIdleCloseRespawnsInDefault: approving a plan moves
// the CLI to default; a reloaded idle_timeout closes the live process,
// and the next one starts in default, not in plan again.
func TestApprovedPlanThenIdleCloseRespawnsInDefault(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	md := r.say(chat, alice, "/mode plan")
	r.waitBot(chat, "switched", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
	in := r.say(chat, alice, "PLANIT add a button")
	plan := r.approvalMessage(chat, "Add a button")
	assert.Equal(t, "plan", flagValue(r.cliArgs(key), "--permission-mode"))
	r.tg.UserPresses(chat, plan.ID, buttonData(plan, "Approve plan"))
	r.finalAnswer(chat, in.ID, "Plan approved")
	require.Eventually(t, func() bool { return r.storedChat(key).PermissionMode == "default" }, wait, 10*time.Millisecond,
		"the CLI's switch to default is the chat's mode now")

	// SIGHUP with a short idle_timeout reaches the live session.
	cfg := *r.b.Config()
	cfg.Claude.IdleTimeout = config.Duration(100 * time.Millisecond)
	r.b.Reload(&cfg)
	require.Eventually(t, func() bool { return r.b.ChatPID(key) == 0 }, wait, 20*time.Millisecond, "closed as idle")
	back := cfg
	back.Claude.IdleTimeout = config.DefaultIdleTimeout // so the next CLI stays up to be looked at
	r.b.Reload(&back)

	again := r.say(chat, alice, "next step")
	r.finalAnswer(chat, again.ID, "echo: next step")
	assert.Equal(t, "default", flagValue(r.cliArgs(key), "--permission-mode"))
}

package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// A background job outlives a short idle_timeout (issue 24 §1): with the
// real CLI, a Bash job run in the background keeps the chat's CLI alive,
// /status says what it waits for, and the turn the CLI starts by itself
// when the job ends reaches the chat.
func TestBackgroundJobOutlivesIdleTimeout(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withRules(fakeapi.ToolTurn("BGJOB", "Bash", map[string]any{
		"command": "sleep 5; echo job-done", "run_in_background": true, "description": "slow job"}, "Started it.")),
		withConfig(func(c *config.Config) {
			// An idle close would close stdin, and after stop_timeout the
			// CLI (which waits for its jobs on EOF) is killed with the job.
			c.Claude.IdleTimeout = config.Duration(time.Second)
			c.Claude.StopTimeout = config.Duration(time.Second)
		}))
	in := r.say(chat, alice, "BGJOB please")
	first := r.finalAnswer(chat, in.ID, "Started it.")
	pid := r.b.ChatPID(key)
	time.Sleep(1500 * time.Millisecond) // past idle_timeout
	assert.Equal(t, pid, r.b.ChatPID(key), "not closed for idle while the job runs")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "/status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "1 task running in the background")

	own := r.waitBot(chat, "the turn the CLI starts when the job ends", func(m telegramtest.Message) bool {
		return m.ID > first.ID && m.ID > status.ID && strings.Contains(m.Text, "⏱")
	})
	assert.True(t, strings.HasPrefix(own.Text, `🧵 Background command "slow job" completed (exit code 0)`),
		"headed with why it came: %q", own.Text)
	assert.NotContains(t, first.Text, "🧵 Background command", "a typed turn's answer is not headed")
	assert.Equal(t, pid, r.b.ChatPID(key), "the same CLI answered")
	assert.Empty(t, r.logLines("closing idle CLI process"), "never idle-closed while the job ran")
}

// /new while a background job runs says the job stopped with the old CLI
// (issue 24 §1).
func TestNewWithABackgroundJobSaysItStopped(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withRules(fakeapi.ToolTurn("BGJOB", "Bash", map[string]any{
		"command": "sleep 60; echo job-done", "run_in_background": true, "description": "slow job"}, "Started it.")),
		withConfig(func(c *config.Config) { c.Claude.StopTimeout = config.Duration(time.Second) }))
	in := r.say(chat, alice, "BGJOB please")
	r.finalAnswer(chat, in.ID, "Started it.")
	require.Eventually(t, func() bool {
		st := r.b.ChatState(state.ChatKey{Chat: state.ChatID(alice)})
		return st == "waiting_background"
	}, wait, 20*time.Millisecond)
	nw := r.say(chat, alice, "/new")
	r.waitBot(chat, "/new", func(m telegramtest.Message) bool { return m.ReplyTo == nw.ID })
	r.waitBot(chat, "the stopped job named", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "its background task stopped with it")
	})
}

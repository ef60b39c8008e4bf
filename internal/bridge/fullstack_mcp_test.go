package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
)

// An MCP server that fails to start is named in the first answer of the
// session (the real CLI reports it in system/init), and not again in the
// next turns of that session.
func TestFailedMCPServerIsNamedOncePerSession(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	cfgPath := claudetest.BrokenMCPConfig(t)
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Claude.ExtraArgs = append(c.Claude.ExtraArgs, "--mcp-config", cfgPath, "--strict-mcp-config")
	}))
	const note = "MCP server not available in this session: broken (failed)"

	one := r.say(chat, alice, "one")
	a1 := r.finalAnswer(chat, one.ID, "echo: one")
	assert.Contains(t, a1.Text, note)
	two := r.say(chat, alice, "two")
	a2 := r.finalAnswer(chat, two.ID, "echo: two")
	assert.NotContains(t, a2.Text, "MCP server", "once per session")

	newSession := r.say(chat, alice, "/new")
	r.waitBot(chat, "/new", func(m telegramtest.Message) bool { return m.ReplyTo == newSession.ID })
	three := r.say(chat, alice, "three")
	a3 := r.finalAnswer(chat, three.ID, "echo: three")
	assert.Contains(t, a3.Text, note, "a new session is told again")
	n := 0
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if strings.Contains(m.Text, note) && strings.Contains(m.Text, "⏱") {
			n++
		}
	}
	assert.Equal(t, 2, n)
}

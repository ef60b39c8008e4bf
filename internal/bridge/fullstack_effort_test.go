package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/telegramtest"
)

// effortOf is the output_config.effort of the model call whose last
// prompt was prompt, "" when it carried none.
func (r *rig) effortOf(prompt string) string {
	r.t.Helper()
	oc, _ := r.callFor(prompt).JSON["output_config"].(map[string]any)
	e, _ := oc["effort"].(string)
	return e
}

// pickIn presses label on menu and waits for the menu to become the answer.
func (r *rig) pickIn(chat telegramtest.ChatID, menu telegramtest.Message, label, want string) telegramtest.Message {
	r.t.Helper()
	data := buttonData(menu, label)
	require.NotEmpty(r.t, data, "%q on %q", label, menu.Text)
	_, err := r.tg.TryUserPresses(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, menu.ID, data)
	require.NoError(r.t, err)
	return r.waitBot(chat, "the menu's answer", func(m telegramtest.Message) bool {
		return m.ID == menu.ID && len(m.Keyboard) == 0 && strings.Contains(m.Text, want)
	})
}

// TestEffortEndToEnd: the project's effort reaches the real CLI as
// --effort and the API as output_config.effort; /effort's menu marks it;
// a press changes the live CLI at once (the next request carries the new
// level, the reply says what the model applies), is stored, shown by
// /status and the footer, and survives a restart as the new CLI's
// --effort; /effort default goes back to the config's level.
func TestEffortEndToEnd(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.Effort = runner.EffortLow }))

	r.ask(chat, "one")
	assert.Contains(t, r.cliArgs(key), "--effort=low")
	assert.Equal(t, "low", r.effortOf("one"))
	two := r.ask(chat, "two")
	assert.Contains(t, two.Text, "effort low", "the footer: the level the turn ran with")

	menu := r.command(chat, "/effort", "Effort: low (the configured default)")
	assert.Contains(t, menu.Text, "Claude's model applies low")
	for _, want := range []string{"default", "✅ low", "medium", "high", "xhigh", "max"} {
		assert.NotEmpty(t, buttonData(menu, want), "button %q", want)
	}
	pid := r.b.ChatPID(key)
	r.pickIn(chat, menu, "max", "Effort: max\nClaude's model applies max, from its next request.")
	assert.Equal(t, "max", r.storedChat(key).Effort)

	three := r.ask(chat, "three")
	assert.Equal(t, "max", r.effortOf("three"), "the live CLI changed at once")
	assert.Equal(t, pid, r.b.ChatPID(key), "without a restart")
	assert.Contains(t, three.Text, "effort max")
	r.command(chat, "/status", "Effort: max")

	r.stop()
	r.start()
	r.ask(chat, "four")
	assert.Contains(t, r.cliArgs(key), "--effort=max", "the stored choice starts the next CLI")
	assert.Equal(t, "max", r.effortOf("four"))

	r.command(chat, "/effort default", "Effort: low\nClaude's model applies low, from its next request.")
	assert.Empty(t, r.storedChat(key).Effort, "the chat follows the config again")
	r.ask(chat, "five")
	assert.Equal(t, "low", r.effortOf("five"))
	r.command(chat, "/effort turbo", "Usage: /effort low|medium|high|xhigh|max")
	assert.Empty(t, r.storedChat(key).Effort, "a wrong level changes nothing")
}

// TestEffortOnAModelWithoutLevels: claude-sonnet-4-5 takes no effort
// level, so the CLI sends none; /effort says so instead of claiming the
// level, and no footer names one.
func TestEffortOnAModelWithoutLevels(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Claude.Model = "claude-sonnet-4-5"
		c.Claude.Effort = runner.EffortHigh
	}))
	r.ask(chat, "one")
	assert.Contains(t, r.cliArgs(key), "--effort=high")
	assert.Empty(t, r.effortOf("one"), "the model takes none")
	r.command(chat, "/effort xhigh", "Effort: xhigh\nClaude's current model takes no effort level, so its requests carry none.")
	two := r.ask(chat, "two")
	assert.Empty(t, r.effortOf("two"))
	assert.NotContains(t, two.Text, "effort")
	r.command(chat, "/status", "Effort: xhigh (the model takes none)")
	assert.Equal(t, "xhigh", r.storedChat(key).Effort, "kept for a model that takes it")
}

// TestEffortOfTheProject: a chat that chose no level gets its project's
// effort (projects.<name>.effort) when its CLI starts there, and /effort
// says where the level comes from.
func TestEffortOfTheProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withProjects(map[string]config.Project{"beta": {Path: realDir(t), Effort: runner.EffortXHigh}}))
	r.ask(chat, "in default")
	assert.NotContains(t, strings.Join(r.cliArgs(key), " "), "--effort", "no level configured: the CLI's default")
	assert.Equal(t, "medium", r.effortOf("in default"), "the CLI's default for its model")
	r.command(chat, "/project beta", "works in beta")
	r.ask(chat, "in beta")
	assert.Contains(t, r.cliArgs(key), "--effort=xhigh")
	assert.Equal(t, "xhigh", r.effortOf("in beta"))
	r.command(chat, "/effort", "Effort: xhigh (the configured default)")
}

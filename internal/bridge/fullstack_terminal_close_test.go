package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// TestTerminalCloseTakenBackByAWaitingRun: 💻 Terminal is pressed during
// a turn while a webhook run waits for it. At the turn's end the CLI is
// closed for the terminal, and the run, whose turn has come, goes to
// Claude while it closes. The session is then not the terminal's: no
// message says it is, the chat is told a message took it back, and the
// run is answered.
func TestTerminalCloseTakenBackByAWaitingRun(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withOps(ciTrigger), withConfig(func(c *config.Config) { c.Progress.Drafts = false }))
	waitReady(r)
	first := r.ask(chat, "hello")

	in := r.say(chat, alice, "STEADY please")
	r.waitBot(chat, "progress", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	r.press(chat, first.ID, "💻 Terminal")
	r.waitBot(chat, "closes after the turn", func(m telegramtest.Message) bool {
		return strings.HasPrefix(m.Text, "💻 Claude here closes this session once its turn is over")
	})
	run := r.ciFailedOn("fix/waiting", "d-1")
	r.finalAnswer(chat, in.ID, "steady words")
	r.waitBot(chat, "the run's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: "+run) && strings.Contains(m.Text, "⏱")
	})
	r.waitBot(chat, "taken back", func(m telegramtest.Message) bool {
		return strings.HasPrefix(m.Text, "💻 A message went to Claude here while it was being closed for the terminal")
	})
	r.settled("after the run")
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		assert.NotContains(t, m.Text, "This session is yours at the terminal now")
	}
	assert.Equal(t, 1, modelCallsWith(r.claude.API, run), "the run reached Claude once")
}

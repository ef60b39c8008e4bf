package bridge_test

import (
	"strings"
	"testing"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// A message the CLI cancels before reading it (command_lifecycle
// "cancelled" while still queued) gets a notice naming it, instead of
// vanishing.
func TestQueuedMessageCancelledByTheCLIIsNamed(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) {
		useFakeCLI(c)
	}))
	held := r.say(chat, alice, "HOLD this turn")
	dropped := r.say(chat, alice, "FORGOTTEN by the CLI")
	r.waitBot(chat, "cancelled notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == dropped.ID && strings.Contains(m.Text, "Claude did not read “FORGOTTEN by the CLI”")
	})
	r.finalAnswer(chat, held.ID, "held turn done")
	next := r.say(chat, alice, "after that")
	r.finalAnswer(chat, next.ID, "echo: after that")
}

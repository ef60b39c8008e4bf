package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// A turn whose CLI prints nothing says so in its progress message, then
// asks once with ⏹ Cancel / ⏳ Keep waiting; Keep waiting defers the
// question, Cancel stops the turn, and the question's buttons go away.
func TestStalledTurnIsShownAndAsked(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	hang := func(r *rig) {
		s := script()
		s.Rules = append([]fakeapi.Rule{{Name: "hang", When: fakeapi.Match{PromptContains: "HANGSTALL"},
			Replies: []fakeapi.Reply{fakeapi.Hang()}}}, s.Rules...)
		r.claude = claudetest.New(r.t, s)
	}
	r := newRig(t, hang, withConfig(func(c *config.Config) {
		c.Progress.StallAfter = config.Duration(time.Second)
		c.Progress.StallNotifyAfter = config.Duration(2 * time.Second)
	}))
	in := r.say(chat, alice, "HANGSTALL please")
	r.waitBot(chat, "progress with the stall line", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "⏳ no output for") && strings.Contains(m.Text, "waiting for the model")
	})
	ask := r.waitBot(chat, "stall question", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && buttonData(m, "Keep waiting") != ""
	})
	silent := map[bool]int{}
	for _, c := range r.tg.Snapshot().Calls {
		if c.Method == "sendMessage" {
			silent[c.Params["disable_notification"] == "true"]++
			if strings.Contains(c.Params["text"], "may be stuck") {
				assert.NotEqual(t, "true", c.Params["disable_notification"], "the stall question notifies")
			}
		}
	}
	assert.NotZero(t, silent[true], "the progress message itself is silent (the check above can fail)")
	r.tg.UserPresses(chat, ask.ID, buttonData(ask, "Keep waiting"))
	r.waitBot(chat, "kept waiting", func(m telegramtest.Message) bool {
		return m.ID == ask.ID && len(m.Keyboard) == 0 && strings.Contains(m.Text, "keep waiting")
	})
	again := r.waitBot(chat, "asked again after another stall_notify_after", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && m.ID != ask.ID && buttonData(m, "Keep waiting") != ""
	})
	r.tg.UserPresses(chat, again.ID, buttonData(again, "Cancel"))
	r.waitBot(chat, "the turn stopped", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Stopped")
	})
	r.waitBot(chat, "question closed", func(m telegramtest.Message) bool {
		return m.ID == again.ID && len(m.Keyboard) == 0
	})
	next := r.say(chat, alice, "still there?")
	r.finalAnswer(chat, next.ID, "echo: still there?")
}

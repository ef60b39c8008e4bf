package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/telegramtest"
)

// A user who blocked the bot (403 on an answer) and writes again gets
// answers again at once, not after the outbox's 403 cooldown.
func TestBlockedBotIsLiftedWhenTheUserWritesAgain(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool {
		return c.Method == "sendMessage" && strings.Contains(c.Params["text"], "echo: while blocked")
	}, telegramtest.Fault{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	r.say(chat, alice, "while blocked")
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		for _, c := range sn.Calls {
			if c.Method == "sendMessage" && c.Status == 403 {
				return true
			}
		}
		return false
	})
	stop()
	again := r.say(chat, alice, "unblocked now")
	r.finalAnswer(chat, again.ID, "echo: unblocked now")
	for _, c := range r.tg.Snapshot().Calls {
		// The progress message may have streamed the text before the 403;
		// the answer itself is the sendMessage that carries the footer.
		if c.Method == "sendMessage" && c.Status == 200 && strings.Contains(c.Params["text"], "echo: while blocked") {
			assert.NotContains(t, c.Params["text"], "⏱", "the answer refused with 403 is not re-sent")
		}
	}
}

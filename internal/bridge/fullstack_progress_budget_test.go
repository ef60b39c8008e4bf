package bridge_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/telegramtest"
)

// A progress message whose send has not got through when the answer goes
// out (here a 429 on it, again on every retry while the turn runs) is
// never sent: the answer alone ends the turn, as for a quick one, and no
// summary of work nobody saw is posted afterwards.
func TestProgressNotShownBeforeTheAnswerIsNeverSent(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	var answered, refused atomic.Bool
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool {
		if c.Method != "sendMessage" {
			return false
		}
		if strings.Contains(c.Params["text"], "steady words steady words") {
			answered.Store(true)
		}
		// The progress message carries the Cancel button; the answer does not.
		hit := !answered.Load() && strings.Contains(c.Params["reply_markup"], "Cancel")
		if hit {
			refused.Store(true)
		}
		return hit
	}, telegramtest.Fault{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1})
	defer stop()
	in := r.say(chat, alice, "STEADY please")
	r.finalAnswer(chat, in.ID, "steady words")
	r.stop() // drains the outbox: whatever was still queued has been sent now
	assert.True(t, refused.Load(), "the turn got as far as trying its progress message")
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if m.ReplyTo == in.ID {
			assert.Contains(t, m.Text, "steady words", "only the answer replies to the prompt, got %q", m.Text)
		}
	}
	for _, c := range r.tg.Snapshot().Calls {
		assert.NotEqual(t, "editMessageText", c.Method, "no summary edit of a message never shown")
	}
	// Drafts run beside the chat's messages, so one can start in the
	// milliseconds between a 429 leaving Telegram and the outbox reading
	// it; after that the chat's drafts wait out the pause too.
	for _, v := range r.tg.ViolationsOfRetryAfter() {
		if v.Call.Method == "sendMessageDraft" {
			assert.Less(t, v.Call.Time.Sub(v.Penalty.Time), 100*time.Millisecond, "a draft long after the 429: %+v", v)
			continue
		}
		t.Errorf("a message call inside a retry_after window: %+v", v)
	}
}

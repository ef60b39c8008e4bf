package bridge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// journaledFor reports whether an undelivered message to key holding text
// waits in the journal.
func (r *rig) journaledFor(key state.ChatKey, text string) bool {
	items, err := r.store.PendingOutbox(context.Background())
	require.NoError(r.t, err)
	for _, it := range items {
		if it.Key == key && strings.Contains(string(it.Payload), text) {
			return true
		}
	}
	return false
}

// Answers the previous run could not deliver are sent at the next start,
// but only to chats the config still serves: a group taken off
// allowed_chat_ids meanwhile gets nothing, and its entry is dropped.
func TestRestartSendsNothingLeftForAChatNoLongerAllowed(t *testing.T) {
	private := telegramtest.ChatID(alice)
	serving := func(groups ...int64) func(*config.Config) {
		return func(c *config.Config) {
			useFakeCLI(c)
			c.Telegram.AllowedChatIDs = groups
			c.Telegram.GroupTrigger = config.GroupTriggerAll
		}
	}
	r := newRig(t, withConfig(serving(int64(team))))
	r.addTeam()
	r.ask(team, "warm up") // the group's CLI is up
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool {
		return c.Method == "sendMessage" && (c.Chat == team || c.Chat == private)
	}, telegramtest.Fault{Code: http.StatusInternalServerError, Description: "Internal Server Error"})
	r.say(team, alice, "for the group")
	r.say(private, alice, "for alice")
	groupKey, aliceKey := state.ChatKey{Chat: state.ChatID(team)}, state.ChatKey{Chat: state.ChatID(alice)}
	require.Eventually(t, func() bool {
		return r.journaledFor(groupKey, "echo: for the group") && r.journaledFor(aliceKey, "echo: for alice")
	}, wait, 20*time.Millisecond, "both answers wait in the journal")
	r.crash()
	stop()

	r.mutate = serving() // the group is no longer served
	r.start()
	r.waitBot(private, "alice's answer, sent after the restart", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: for alice")
	})
	// A journaled send is acked once it is delivered, or dropped: either
	// way it is gone from the journal, and only then is the check final.
	require.Eventually(t, func() bool { return !r.journaledFor(groupKey, "echo: for the group") }, wait, 20*time.Millisecond,
		"not kept for later either")
	for _, m := range r.tg.Messages(team) {
		assert.NotContains(t, m.Text, "echo: for the group", "nothing goes to a group no longer allowed")
	}
}

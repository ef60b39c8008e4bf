package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// TestTerminalHeldScheduledRunSurvivesARestart: a scheduled prompt that
// comes due while a claude outside untether runs the chat's session is
// held and the chat asked, like a typed message; untether restarting
// meanwhile (stopped, or drained as SIGTERM does) loses nothing: the run
// stays pending in the state database, the next start asks again (that
// claude still runs), and ▶️ Continue anyway then sends it, once.
func TestTerminalHeldScheduledRunSurvivesARestart(t *testing.T) {
	for _, stop := range []string{"stop", "drain"} {
		t.Run(stop, func(t *testing.T) {
			chat := telegramtest.ChatID(alice)
			key := state.ChatKey{Chat: state.ChatID(alice)}
			const prompt = "SCHEDULED held over a restart"
			clock := timeshift.New(time.Now())
			var person string
			r := newRig(t, func(r *rig) { r.clock = clock }, withPersonClaude(&person))
			first := r.ask(chat, "REMEMBER fig")
			desk := startAtTerminal(t, footerLine(t, first), r.sessionOf(key))
			defer desk.kill()

			at := r.say(chat, alice, "/at 1m "+prompt)
			r.botReply(chat, at, "Scheduled #")
			clock.Advance(2 * time.Minute)
			question := func(not telegramtest.MessageID) telegramtest.Message {
				t.Helper()
				return r.waitBot(chat, "the question", func(m telegramtest.Message) bool {
					return m.ID != not && strings.Contains(m.Text, "A claude outside untether runs this session") &&
						buttonData(m, "▶️ Continue anyway") != ""
				})
			}
			q := question(0)
			assert.Zero(t, r.callsWith(prompt), "held: not sent to Claude")
			pending, err := r.store.PendingScheduleRuns(context.Background())
			require.NoError(t, err)
			require.Len(t, pending, 1, "the run is still pending in the state database while it is held")

			if stop == "stop" {
				r.stop()
			} else {
				r.drain(wait)
			}
			r.start()
			again := question(q.ID) // the old question's buttons say untether restarted
			assert.Zero(t, r.callsWith(prompt), "still held: not sent to Claude")
			r.press(chat, again.ID, "▶️ Continue anyway")
			answer := r.waitBot(chat, "the scheduled answer", func(m telegramtest.Message) bool {
				return strings.Contains(m.Text, "echo: "+prompt) && strings.Contains(m.Text, "⏱")
			})
			assert.Contains(t, answer.Text, "⏰ scheduled #")
			// The terminal's claude leaves, so a message goes without asking;
			// a second copy of the run would have reached Claude by its answer.
			desk.kill()
			require.Eventually(t, func() bool { return len(desk.found()) == 0 }, wait, 20*time.Millisecond)
			r.ask(chat, "after the scheduled run")
			assert.Equal(t, 1, r.callsWith(prompt), "sent once")
			pending, err = r.store.PendingScheduleRuns(context.Background())
			require.NoError(t, err)
			assert.Empty(t, pending, "no longer pending once it reached the CLI")
		})
	}
}

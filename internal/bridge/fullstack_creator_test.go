package bridge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/timeshift"
)

// A group schedule is its creator's, and a prompt a limit rejected is its
// author's: once the operator takes that user off the allow-list, neither
// goes to Claude any more, although the group is still served (another
// member's schedule, due at the same time, runs).
func TestRunsOfAUserTakenOffTheAllowListDoNotGo(t *testing.T) {
	clock := timeshift.New(time.Now())
	reset := time.Now().Add(time.Hour)
	r := newRig(t, func(r *rig) {
		r.clock = clock
		r.claude = claudetest.New(r.t, limitScript(map[string]time.Time{"LIMITED": reset}), claudetest.WithOAuthToken("sk-ant-oat01-fake"))
	}, withConfig(func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(team)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
		c.Telegram.Timezone = "UTC"
		c.Claude.RetryAfterLimit = config.RetryAuto
	}))
	r.addTeam()
	for _, who := range []telegramtest.UserID{bob, alice} {
		prompt := "SCHEDULED by " + map[telegramtest.UserID]string{bob: "bob", alice: "alice"}[who]
		in := r.say(team, who, "/at 30m "+prompt)
		r.botReply(team, in, "Scheduled #")
	}
	limited := r.say(team, bob, "LIMITED by bob")
	r.waitBot(team, "the limit's notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == limited.ID && strings.Contains(m.Text, "will be sent again at")
	})

	cfg := *r.b.Config()
	cfg.Telegram.AllowedUserIDs = []int64{int64(alice)}
	r.b.Reload(&cfg)
	clock.Advance(2 * time.Hour)
	r.waitBot(team, "alice's schedule ran", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: SCHEDULED by alice") && strings.Contains(m.Text, "⏱")
	})
	require.Eventually(t, func() bool {
		return len(r.logLines("not running a scheduled prompt: the user it is from is no longer allowed")) == 1 &&
			len(r.logLines("not sending a prompt again after its limit: the user it is from is no longer allowed")) == 1
	}, wait, 20*time.Millisecond)
	assert.Equal(t, 0, modelCallsWith(r.claude.API, "SCHEDULED by bob"), "bob's schedule did not run")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, "LIMITED by bob"), "bob's prompt was not sent again")
}

package bridge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// /mode is judged by its effect: in default mode a Write is asked about;
// after /mode acceptEdits the same kind of Write runs without asking.
func TestModeSwitchChangesWhatIsAsked(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	writes := func(r *rig) {
		s := script()
		for _, name := range []string{"WRITEONE", "WRITETWO"} {
			s.Rules = append(fakeapi.ToolTurn(name, "Write", map[string]any{
				"file_path": "{{cwd}}/" + strings.ToLower(name) + ".txt", "content": "x\n"}, "Written."), s.Rules...)
		}
		r.claude = claudetest.New(r.t, s)
	}
	r := newRig(t, writes)

	first := r.say(chat, alice, "WRITEONE please")
	ap := r.approvalMessage(chat, "writeone.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Deny"))
	r.finalAnswer(chat, first.ID, "Written.")
	assert.NoFileExists(t, r.claude.Workdir+"/writeone.txt", "default mode asked, and the denial held")

	md := r.say(chat, alice, "/mode acceptEdits")
	r.waitBot(chat, "mode switched", func(m telegramtest.Message) bool {
		return m.ReplyTo == md.ID && strings.Contains(m.Text, "acceptEdits")
	})
	second := r.say(chat, alice, "WRITETWO please")
	r.finalAnswer(chat, second.ID, "Written.")
	got, err := readFile(r.claude.Workdir + "/writetwo.txt")
	require.NoError(t, err, "acceptEdits wrote the file")
	assert.Equal(t, "x\n", got)
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		assert.False(t, strings.Contains(m.Text, "writetwo.txt") && buttonData(m, "Approve") != "",
			"nothing was asked in acceptEdits: %q", m.Text)
	}
}

package bridge_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// streaming waits until the answer to in visibly streams with want in its
// text: in a draft where drafts apply, in the progress message elsewhere.
func (r *rig) streaming(chat telegramtest.ChatID, in telegramtest.MessageID, want string) {
	r.t.Helper()
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		if d, ok := sn.ShownDraft(chat, 0); ok && strings.Contains(d.Text, want) {
			return true
		}
		for _, m := range sn.BotMessages(chat) {
			if m.ReplyTo == in && strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
}

// draftsIn returns the accepted drafts of chat.
func draftsIn(sn *telegramtest.Snapshot, chat telegramtest.ChatID) []telegramtest.Draft {
	var out []telegramtest.Draft
	for _, d := range sn.Drafts {
		if d.Chat == chat {
			out = append(out, d)
		}
	}
	return out
}

// In a private chat the answer streams as a draft, the progress message
// keeps the tool rows, and the answer replaces the draft as a message.
func TestAnswerStreamsAsADraftInAPrivateChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "STEADY please")
	r.streaming(chat, in.ID, "steady words")
	final := r.finalAnswer(chat, in.ID, "steady words")

	sn := r.tg.Snapshot()
	drafts := draftsIn(sn, chat)
	require.GreaterOrEqual(t, len(drafts), 2, "the words stream in several drafts")
	for i, d := range drafts {
		assert.Equal(t, drafts[0].DraftID, d.DraftID, "one draft id for the reply")
		assert.True(t, strings.HasPrefix(final.Text, strings.TrimSpace(d.Text)), "draft %d %q is the start of the answer", i, d.Text)
		if i > 0 {
			assert.True(t, strings.HasPrefix(d.Text, strings.TrimSpace(drafts[i-1].Text)), "drafts only grow")
		}
		assert.False(t, d.Time.After(final.Date), "no draft after the answer (draft %d)", i)
	}
	_, shown := sn.ShownDraft(chat, 0)
	assert.False(t, shown, "the answer replaced the draft")
	for _, c := range sn.CallsTo(chat) {
		assert.Less(t, c.Status, 400, "%s failed: %s", c.Method, c.Description)
		if c.Method == "editMessageText" || c.Method == "sendMessage" && !strings.Contains(c.Params["text"], "⏱") {
			assert.NotContains(t, c.Params["text"], "steady words", "the progress message does not carry the text (%s)", c.Method)
		}
	}

	// Cancelled while drafting: the notice replaces the draft, and the
	// next reply has a draft id of its own.
	in2 := r.say(chat, alice, "SLOW please")
	r.streaming(chat, in2.ID, "slow answer")
	prog := r.waitBot(chat, "progress message", func(m telegramtest.Message) bool { return m.ReplyTo == in2.ID && buttonData(m, "Cancel") != "" })
	r.tg.UserPresses(chat, prog.ID, buttonData(prog, "Cancel"))
	stopped := r.waitBot(chat, "stopped notice", func(m telegramtest.Message) bool { return m.ReplyTo == in2.ID && strings.Contains(m.Text, "Stopped") })
	sn = r.tg.Snapshot()
	second := draftsIn(sn, chat)[len(drafts):]
	require.NotEmpty(t, second)
	assert.NotEqual(t, drafts[0].DraftID, second[0].DraftID)
	for _, d := range second {
		assert.False(t, d.Time.After(stopped.Date), "no draft after the notice")
	}
	_, shown = sn.ShownDraft(chat, 0)
	assert.False(t, shown)
}

// In a group the answer streams in progress edits; no draft is attempted.
func TestGroupStreamsInProgressEdits(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	in := r.say(team, alice, "STEADY please")
	r.waitBot(team, "progress with streamed text", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "steady words") && buttonData(m, "Cancel") != ""
	})
	r.finalAnswer(team, in.ID, "steady words")
	sn := r.tg.Snapshot()
	assert.Empty(t, sn.CallsOf("sendMessageDraft"), "no draft call in a group")
}

// A private chat whose Telegram refuses drafts falls back to progress
// edits for good, without asking again.
func TestRefusedDraftsFallBackToEdits(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "sendMessageDraft" },
		telegramtest.Fault{Code: http.StatusBadRequest, Description: "Bad Request: TEXTDRAFT_PEER_INVALID"})
	defer stop()
	in := r.say(chat, alice, "SLOW please")
	r.waitBot(chat, "progress with streamed text", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "slow answer") && buttonData(m, "Cancel") != ""
	})
	r.say(chat, alice, "/cancel")
	r.waitBot(chat, "stopped", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && strings.Contains(m.Text, "Stopped") })
	refused := len(r.tg.Snapshot().CallsOf("sendMessageDraft"))
	assert.Equal(t, 1, refused, "asked once")

	in2 := r.say(chat, alice, "STEADY again")
	r.waitBot(chat, "progress with streamed text", func(m telegramtest.Message) bool {
		return m.ReplyTo == in2.ID && strings.Contains(m.Text, "steady words")
	})
	r.finalAnswer(chat, in2.ID, "steady words")
	assert.Len(t, r.tg.Snapshot().CallsOf("sendMessageDraft"), refused, "not asked again")
	assert.Contains(t, r.logs.String(), "Telegram refused a draft")
}

// What Claude says before a tool call streams as a draft, then stays in the
// progress message while the tool runs; the answer streams as a new draft.
func TestNarrationBeforeAToolReturnsToTheProgressMessage(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	yes, no := fakeapi.Bool(true), fakeapi.Bool(false)
	narrate := fakeapi.Script{Rules: []fakeapi.Rule{
		{Name: "narrate-after", When: fakeapi.Match{AnyUserContains: "NARRATE", LastIsToolResult: yes},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(strings.Repeat("found nothing ", 20))}, ChunkDelayMs: 150}}},
		{Name: "narrate", When: fakeapi.Match{PromptContains: "NARRATE", LastIsToolResult: no},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{
				fakeapi.TextBlock("Let me look for notes first."),
				fakeapi.ToolUseBlock("Glob", map[string]any{"pattern": "**/*.notes"}),
			}, ChunkDelayMs: 150}}},
	}}
	r := newRig(t, func(r *rig) { r.claude = claudetest.New(r.t, narrate) })
	in := r.say(chat, alice, "NARRATE please")
	r.waitBot(chat, "the narration and the tool row in the progress message", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Let me look for notes first.") && strings.Contains(m.Text, "Glob")
	})
	final := r.finalAnswer(chat, in.ID, "found nothing")
	assert.NotContains(t, final.Text, "Let me look", "the answer is the last text block")

	drafts := draftsIn(r.tg.Snapshot(), chat)
	var narration, answer []telegramtest.Draft
	for _, d := range drafts {
		switch {
		case strings.Contains(d.Text, "Let me look"):
			narration = append(narration, d)
		case strings.Contains(d.Text, "found nothing"):
			answer = append(answer, d)
		}
	}
	require.NotEmpty(t, narration, "the narration streamed as a draft")
	require.NotEmpty(t, answer, "the answer streamed as a draft")
	assert.NotEqual(t, narration[0].DraftID, answer[0].DraftID, "each text block is its own draft")
	for _, c := range r.tg.Snapshot().CallsTo(chat) {
		if c.Method == "editMessageText" {
			assert.NotContains(t, c.Params["text"], "found nothing", "the answer being drafted is not in the progress message")
		}
	}
}

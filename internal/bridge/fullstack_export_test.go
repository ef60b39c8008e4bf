package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/telegramtest"
)

// exported waits for the document /export sent to chat.
func (r *rig) exported(chat telegramtest.ChatID, replyTo telegramtest.MessageID) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "the exported conversation", func(m telegramtest.Message) bool {
		return m.ReplyTo == replyTo && m.Document != nil
	})
}

// documents counts the documents the bot sent to chat.
func documents(sn *telegramtest.Snapshot, chat telegramtest.ChatID) int {
	n := 0
	for _, m := range sn.BotMessages(chat) {
		if m.Document != nil {
			n++
		}
	}
	return n
}

// TestExportSendsConversation: /export sends the session's conversation,
// read from the real CLI's transcript, as a Markdown document: each
// prompt, each answer, the tool call in one line, and untether's record of
// the turns and their cost, which matches what the state database holds.
// Before the chat has a session, there is nothing to export.
func TestExportSendsConversation(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withClaude())
	r.command(chat, "/export", "There is no session here to export yet: your next message starts one.")
	assert.Zero(t, documents(r.tg.Snapshot(), chat))

	r.ask(chat, "hello there")
	in := r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.finalAnswer(chat, in.ID, "The command ran.")

	ask := r.say(chat, alice, "/export")
	doc := r.exported(chat, ask.ID)
	sid := r.sessionOf(key)
	require.NotEmpty(t, sid)
	assert.Equal(t, "claude-session-"+sid+".md", doc.Document.FileName)
	assert.Contains(t, doc.Text, "📝 The conversation of session "+sid+" · ", "the caption")
	md := string(doc.Document.Data)
	assert.True(t, strings.HasPrefix(md, "# Claude Code session `"+sid+"`\n"), "%.200s", md)
	for _, want := range []string{
		"- Turns: 2\n",
		"## You · ", "> hello there\n", "## Claude\n\necho: hello there\n",
		"> BASHRUN please\n", "- **Bash** `echo hi > out.txt`", "The command ran.\n",
	} {
		assert.Contains(t, md, want)
	}
	assert.Less(t, strings.Index(md, "hello there"), strings.Index(md, "BASHRUN please"), "in the order of the conversation")
	se, err := r.store.GetSession(context.Background(), sid)
	require.NoError(t, err)
	require.Equal(t, 2, se.Turns)
	require.Greater(t, se.CostUSD, 0.0)
	assert.True(t, strings.HasSuffix(md, "\n*untether ran 2 turns of this session, costing "+render.FormatCost(se.CostUSD)+
		" in all, as the CLI reported each turn.*\n"), "%s", md[max(0, len(md)-300):])
}

// TestExportInGroups: in a group, everyone would read the conversation, so
// /export is refused there until [files] export_in_groups allows it (a
// reload is enough); then the group gets its document.
func TestExportInGroups(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	u := telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}
	hello := r.tg.UserSends(team, u, "hello team")
	r.finalAnswer(team, hello.ID, "echo: hello team")

	refused := r.command(team, "/export", "/export works in private chats only")
	assert.Equal(t, "🔒 /export works in private chats only: everyone in this chat would read the conversation. "+
		"The operator can allow it here with [files] export_in_groups.", refused.Text)
	assert.Zero(t, documents(r.tg.Snapshot(), team))

	cfg := *r.b.Config()
	cfg.Files.ExportInGroups = true
	r.b.Reload(&cfg)
	ask := r.tg.UserSends(team, u, "/export")
	doc := r.exported(team, ask.ID)
	assert.Contains(t, string(doc.Document.Data), "> hello team\n")
}

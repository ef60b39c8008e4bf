package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// /continue takes the most recent session in the project's directory only
// when the chat may see it: in a group, only one the group itself ran; in
// a private chat, also one started at a terminal; never another chat's.
// Whoever's it is, the refused session never reaches the model.
func TestContinueTakesOnlyASessionTheChatMaySee(t *testing.T) {
	private := telegramtest.ChatID(alice)
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	r.ask(team, "GROUP first words")
	r.ask(private, "PRIVATE secret kiwi") // now the directory's latest

	// Another chat's session: refused in the group, which goes on in its own.
	refusal := r.command(team, "/continue", "")
	r.ask(team, "after the refusal")
	call := r.callFor("after the refusal")
	assert.False(t, call.AnyUserContains("PRIVATE secret kiwi"), "the private session did not reach the group")
	assert.True(t, call.AnyUserContains("GROUP first words"), "the group kept its own session")
	assert.Contains(t, refusal.Text, "is another chat's")

	// A session started at a terminal: not in a group, yes in a private chat.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	terminal, err := r.claude.Converse(ctx, "TERMINAL notes at the desk")
	require.NoError(t, err)
	refusal = r.command(team, "/continue", "")
	r.ask(team, "still the group's")
	assert.False(t, r.callFor("still the group's").AnyUserContains("TERMINAL notes at the desk"), "the terminal's session did not reach the group")
	assert.Contains(t, refusal.Text, "was started outside untether")
	r.ask(private, "hello again") // the private chat's own session is the latest now
	_, err = r.claude.Converse(ctx, "TERMINAL notes, later")
	require.NoError(t, err)
	r.command(private, "/continue", "started outside untether")
	r.ask(private, "what did I note?")
	assert.True(t, r.callFor("what did I note?").AnyUserContains("TERMINAL notes, later"))
	assert.NotEqual(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))

	// The group's own session, the latest again: continued.
	r.ask(team, "GROUP again")
	r.command(team, "/continue", "this chat's own")
	r.ask(team, "and on")
	assert.True(t, r.callFor("and on").AnyUserContains("GROUP first words"))

	// And the private chat may not take the group's.
	refusal = r.command(private, "/continue", "")
	r.ask(private, "private again")
	assert.False(t, r.callFor("private again").AnyUserContains("GROUP first words"), "the group's session did not reach the private chat")
	assert.Contains(t, refusal.Text, "is another chat's")
}

// A ▶️ press in /sessions on a session started outside untether, which
// another chat has continued since the list was made, is refused in words
// about the pressed session (not /continue's "most recent" one), and the
// chat's next message does not go on with it.
func TestResumeOfAnotherChatsSessionIsRefusedAsPressed(t *testing.T) {
	private := telegramtest.ChatID(alice)
	r := newRig(t)
	bobs := r.addPrivateChat(bob, "Bob")
	terminal, list := r.terminalSessionListed(private)

	// Bob takes it up meanwhile: the session is his chat's now.
	in := r.say(bobs, bob, "/continue")
	r.waitBot(bobs, "continued", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "started outside untether")
	})
	in = r.say(bobs, bob, "BOB goes on")
	r.finalAnswer(bobs, in.ID, "echo: BOB goes on")
	require.Equal(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(bob)}))

	r.press(private, list.ID, "▶️ "+entryNumber(t, list.Text, "TERMINAL plans for the week"))
	refusal := r.waitBot(private, "refused", func(m telegramtest.Message) bool { return m.ID == list.ID && strings.Contains(m.Text, "🔒") })
	assert.Contains(t, refusal.Text, "That session is another chat's now")
	assert.NotContains(t, refusal.Text, "most recent")
	assert.NotContains(t, refusal.Text, "/continue")

	r.ask(private, "ALICE anything new?")
	assert.False(t, r.callFor("ALICE anything new?").AnyUserContains("TERMINAL plans for the week"), "Bob's session did not reach Alice")
	assert.NotEqual(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))
}

// A ▶️ press in /sessions on a session started outside untether, which
// this chat has taken up since the list was made, resumes it as the
// chat's own: not said to be started outside untether, and the next
// message goes on with it.
func TestResumeOfAnOutsideSessionTheChatTookUpSince(t *testing.T) {
	private := telegramtest.ChatID(alice)
	r := newRig(t)
	terminal, list := r.terminalSessionListed(private)

	in := r.say(private, alice, "/continue")
	r.waitBot(private, "continued", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "started outside untether")
	})
	r.ask(private, "ALICE goes on")
	require.Equal(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))
	r.command(private, "/new", "New session")
	require.NotEqual(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))

	r.press(private, list.ID, "▶️ "+entryNumber(t, list.Text, "TERMINAL plans for the week"))
	resumed := r.waitBot(private, "resumed", func(m telegramtest.Message) bool { return m.ID == list.ID && strings.Contains(m.Text, "↩️") })
	assert.NotContains(t, resumed.Text, "started outside untether", "the chat has run it since")

	r.ask(private, "ALICE once more")
	got := r.callFor("ALICE once more")
	assert.True(t, got.AnyUserContains("TERMINAL plans for the week"), "the terminal's turn is in the conversation")
	assert.True(t, got.AnyUserContains("ALICE goes on"), "and the chat's own turn")
	assert.Equal(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))
}

// terminalSessionListed has a session started at a "terminal" (the real
// CLI, outside untether) and chat's /sessions listing it.
func (r *rig) terminalSessionListed(chat telegramtest.ChatID) (session string, list telegramtest.Message) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	session, err := r.claude.Converse(ctx, "TERMINAL plans for the week")
	require.NoError(r.t, err)
	return session, r.command(chat, "/sessions", "Started outside untether")
}

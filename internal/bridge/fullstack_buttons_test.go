package bridge_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

const forum = telegramtest.ChatID(-1002400)

// answerOf waits for the bot's answer to a callback query.
func (r *rig) answerOf(q telegramtest.CallbackQueryID) telegramtest.CallbackAnswer {
	r.t.Helper()
	var got telegramtest.CallbackAnswer
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		i := slices.IndexFunc(sn.CallbackAnswers, func(a telegramtest.CallbackAnswer) bool { return a.QueryID == q })
		if i >= 0 {
			got = sn.CallbackAnswers[i]
		}
		return i >= 0
	})
	return got
}

// botMessageIn waits for the bot's reply to /help where opts put it: a
// message to press buttons on.
func (r *rig) botMessageIn(chat telegramtest.ChatID, opts ...telegramtest.UserOption) telegramtest.Message {
	r.t.Helper()
	return r.command(chat, "/help", "/new", opts...)
}

// TestEveryButtonActsOnlyWhereItBelongs: a client can send any callback
// data on any bot message it sees, so a token copied from one chat can
// arrive in another. For every kind of button, a press carrying a live
// token of a forum topic is refused when it comes from another chat, from
// another topic of the same forum and from the forum's General topic;
// the same press from the topic itself works, so the refusals were about
// where the press came from, and they changed nothing (the one-shot
// buttons, Continue, Retry, Delete, would be spent otherwise).
func TestEveryButtonActsOnlyWhereItBelongs(t *testing.T) {
	r := newRig(t, withConfig(func(c *config.Config) {
		useFakeCLI(c)
		c.Telegram.AllowedChatIDs = []int64{int64(forum)}
	}))
	r.tg.AddChat(telegramtest.Chat{ID: forum, Type: telegramtest.Supergroup, Title: "work", IsForum: true})
	mine, other := r.tg.AddTopic(forum), r.tg.AddTopic(forum)
	owner := state.ChatKey{Chat: state.ChatID(forum), Thread: state.ThreadID(mine)}

	home := r.botMessageIn(forum, telegramtest.InTopic(mine))
	elsewhere := []struct {
		name string
		chat telegramtest.ChatID
		msg  telegramtest.Message
	}{
		{"another chat", telegramtest.ChatID(alice), r.botMessageIn(telegramtest.ChatID(alice))},
		{"another topic", forum, r.botMessageIn(forum, telegramtest.InTopic(other))},
		{"the General topic", forum, r.botMessageIn(forum)},
	}
	aliceUser := telegramtest.User{ID: alice, FirstName: "Alice"}
	for _, kind := range bridge.ButtonKinds() {
		t.Run(string(kind), func(t *testing.T) {
			data, err := r.b.OwnButton(kind, owner)
			require.NoError(t, err)
			for _, e := range elsewhere {
				q := r.tg.ForgePress(e.chat, aliceUser, e.msg.ID, data)
				assert.Equal(t, "This button has expired.", r.answerOf(q).Text, "a press from %s", e.name)
			}
			q := r.tg.ForgePress(forum, aliceUser, home.ID, data)
			assert.NotEqual(t, "This button has expired.", r.answerOf(q).Text, "the same press in its own topic works")
		})
	}
}

// TestForgedPressDoesNotSwitchAnotherChatsMode is the reported attack: the
// token of a /mode menu in one chat, pressed in another chat, switched the
// first chat's mode. Now nothing reaches the first chat: its mode stays,
// and its live CLI runs on in the mode it had (a Bash command still asks).
func TestForgedPressDoesNotSwitchAnotherChatsMode(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	md := r.say(chat, alice, "/mode")
	menu := r.waitBot(chat, "mode menu", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && len(m.Keyboard) > 0 })
	plan := buttonData(menu, "plan")
	require.NotEmpty(t, plan)

	there := r.command(team, "/help", "/new")
	q := r.tg.ForgePress(team, telegramtest.User{ID: alice, FirstName: "Alice"}, there.ID, plan)
	assert.Equal(t, "This button has expired.", r.answerOf(q).Text)
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Mode: default")
	assert.Empty(t, r.storedChat(key).PermissionMode, "nothing stored")
	r.asksApproval(chat)
	assert.NotEmpty(t, buttonData(r.mustMessage(chat, menu.ID), "plan"), "the menu itself was not answered")
}

func (r *rig) mustMessage(chat telegramtest.ChatID, id telegramtest.MessageID) telegramtest.Message {
	r.t.Helper()
	m, ok := r.tg.Message(chat, id)
	require.True(r.t, ok)
	return m
}

// TestForgedApprovalPressIsRefused: a group's pending approval pressed
// with its token from a private chat does not approve it; the group's own
// Deny then decides it, and the command never runs.
func TestForgedApprovalPressIsRefused(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	in := r.say(team, alice, "BASHRUN please")
	ap := r.approvalMessage(team, "echo hi > out.txt")
	elsewhere := r.command(telegramtest.ChatID(alice), "/help", "/new")
	q := r.tg.ForgePress(telegramtest.ChatID(alice), telegramtest.User{ID: alice, FirstName: "Alice"}, elsewhere.ID, buttonData(ap, "Approve"))
	assert.Equal(t, "This button has expired.", r.answerOf(q).Text)
	_, err := r.tg.TryUserPresses(team, telegramtest.User{ID: alice, FirstName: "Alice"}, ap.ID, buttonData(ap, "Deny"))
	require.NoError(t, err)
	r.finalAnswer(team, in.ID, "The command ran.")
	assert.NoFileExists(t, r.claude.Workdir+"/out.txt", "the forged Approve did not run it")
	decided, err := r.store.ApprovalLog(context.Background(), state.ChatKey{Chat: state.ChatID(team)}, 0)
	require.NoError(t, err)
	require.Len(t, decided, 1)
	assert.Equal(t, state.DecisionDeny, decided[0].Decision, "decided by the group's own press")
}

// TestStrangerPressesAreRateLimited: presses from a user the bot does not
// serve are dropped like their messages: one log line a minute per chat,
// and at most one "not allowed" answer a minute per user, however many
// presses come.
func TestStrangerPressesAreRateLimited(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerAll))
	r.addTeam()
	msg := r.command(team, "/help", "/new")
	stranger := telegramtest.User{ID: mallory, FirstName: "Mallory"}
	var queries []telegramtest.CallbackQueryID
	for range 5 {
		queries = append(queries, r.tg.ForgePress(team, stranger, msg.ID, "c:sometoken"))
	}
	// Updates are handled in order: once this is answered, so were the presses.
	r.command(team, "/help", "/new")
	first := r.answerOf(queries[0])
	assert.Equal(t, "You are not allowed to use this bot.", first.Text)
	assert.Equal(t, 1, strings.Count(r.logs.String(), "ignoring a button press from a user not allowed"), "logged once")
	answered := 0
	for _, a := range r.tg.CallbackAnswers() {
		if slices.Contains(queries, a.QueryID) {
			answered++
		}
	}
	assert.Equal(t, 1, answered, "answered once")
}

// A press on a menu shown before a restart says why it does nothing and
// what to do (issue 24 §4); the mode stays. A menu of this run that a
// newer one replaced still just says it has expired.
func TestMenuPressAfterRestartSaysWhy(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	md := r.say(chat, alice, "/mode")
	menu := r.waitBot(chat, "mode menu", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && len(m.Keyboard) > 0 })
	plan := buttonData(menu, "plan")
	require.NotEmpty(t, plan)
	r.stop()
	// Telegram dates messages in whole seconds: start in a later one.
	time.Sleep(time.Until(menu.Date.Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	r.start()

	q := r.tg.UserPresses(chat, menu.ID, plan)
	assert.Contains(t, r.answerOf(q).Text, "untether restarted since these buttons were shown")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Mode: default", "nothing applied")

	again := r.say(chat, alice, "/mode")
	fresh := r.waitBot(chat, "a new mode menu", func(m telegramtest.Message) bool { return m.ReplyTo == again.ID && len(m.Keyboard) > 0 })
	newer := r.say(chat, alice, "/mode")
	r.waitBot(chat, "a newer mode menu", func(m telegramtest.Message) bool { return m.ReplyTo == newer.ID && len(m.Keyboard) > 0 })
	q2 := r.tg.UserPresses(chat, fresh.ID, buttonData(fresh, "plan"))
	assert.Equal(t, "This button has expired.", r.answerOf(q2).Text, "replaced in this run, not by a restart")
}

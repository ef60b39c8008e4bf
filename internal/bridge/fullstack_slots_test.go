package bridge_test

import (
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/telegramtest"
)

const bob = telegramtest.UserID(2001) // allowed by the rig's config

func (r *rig) addPrivateChat(user telegramtest.UserID, name string) telegramtest.ChatID {
	r.tg.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(user), Type: telegramtest.Private, FirstName: name})
	return telegramtest.ChatID(user)
}

func modelSaw(r *rig, text string) bool {
	for _, c := range r.claude.API.ModelCalls() {
		if c.AnyUserContains(text) {
			return true
		}
	}
	return false
}

// With one live slot held by a turn waiting for an approval, another chat's
// message waits for the slot without blocking that chat: it is told why,
// /status answers, its mailbox never stalls (so the watchdog is fed), and
// its turn runs by itself once the slot frees, messages in order.
func TestSlotWaitKeepsTheChatResponsive(t *testing.T) {
	chatA := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.MaxLiveProcesses = 1 }))
	chatB := r.addPrivateChat(bob, "Bob")
	keyB := state.ChatKey{Chat: state.ChatID(bob)}

	inA := r.say(chatA, alice, "BASHRUN please")
	apA := r.approvalMessage(chatA, "echo hi > out.txt")

	inB := r.say(chatB, bob, "first from B")
	notice := r.waitBot(chatB, "slot notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == inB.ID && strings.Contains(m.Text, "Waiting for a free Claude slot (1 of 1 busy: 0 working, 1 waiting for approval)")
	})
	inB2 := r.say(chatB, bob, "second from B")
	st := r.say(chatB, bob, "/status")
	status := r.waitBot(chatB, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Waiting for a free Claude slot")
	assert.Contains(t, status.Text, "2 message(s) not yet handed to Claude")

	// The status reply goes out while its item is still being finished
	// (the update confirmed): wait for the mailbox to settle, then check
	// that the slot wait does not occupy it.
	require.Eventually(t, func() bool { return r.b.StalledFor(keyB, time.Now()) == 0 }, wait, 5*time.Millisecond)
	require.NoError(t, r.b.Healthy(time.Now()), "waiting for a slot is not a stall")
	// An item can be in the mailbox for an instant (a timer's post); what
	// matters is that the actor keeps taking them while it waits, so the
	// watchdog's 3-minutes-later view finds nothing stuck. A wedged actor
	// never gets there (TestHealthyReportsAWedgedChat).
	require.Eventually(t, func() bool {
		return r.b.StalledFor(keyB, time.Now().Add(3*time.Minute)) == 0 && r.b.ChatsHealthy(time.Now().Add(3*time.Minute)) == nil
	}, wait, 10*time.Millisecond, "3 minutes of waiting for a slot is no stall")
	assert.False(t, modelSaw(r, "first from B"), "B has no slot yet")
	for _, m := range r.tg.Snapshot().BotMessages(chatB) {
		assert.NotContains(t, m.Text, "⏱", "no progress or answer while waiting: %q", m.Text)
	}

	r.tg.UserPresses(chatA, apA.ID, buttonData(apA, "Approve"))
	r.finalAnswer(chatA, inA.ID, "The command ran.")
	r.finalAnswer(chatB, inB.ID, "echo: first from B")
	r.finalAnswer(chatB, inB2.ID, "second from B")
	// The notice became the turn's progress message: it no longer says
	// "waiting" and ends as the turn's summary; no second progress
	// message was sent for that turn.
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		m, ok := sn.Message(chatB, notice.ID)
		return ok && !m.Deleted && strings.Contains(m.Text, "Done") && !strings.Contains(m.Text, "Waiting for a free Claude slot")
	})
	var replies []string
	for _, m := range r.tg.Snapshot().BotMessages(chatB) {
		if m.ReplyTo == inB.ID {
			replies = append(replies, m.Text)
		}
	}
	assert.Len(t, replies, 2, "the notice (now the progress message) and the answer: %q", replies)
	require.NoError(t, r.b.Healthy(time.Now()))
}

// /cancel stops a wait for a slot: the waiting messages never reach Claude.
func TestCancelStopsASlotWait(t *testing.T) {
	chatA := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.MaxLiveProcesses = 1 }))
	chatB := r.addPrivateChat(bob, "Bob")
	inA := r.say(chatA, alice, "BASHRUN please")
	apA := r.approvalMessage(chatA, "echo hi > out.txt")
	inB := r.say(chatB, bob, "never mind this")
	r.waitBot(chatB, "slot notice", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "Waiting for a free Claude slot") })
	r.say(chatB, bob, "/cancel")
	r.waitBot(chatB, "cancelled", func(m telegramtest.Message) bool {
		return m.ReplyTo == inB.ID && strings.Contains(m.Text, "cancelled while it waited")
	})
	r.tg.UserPresses(chatA, apA.ID, buttonData(apA, "Approve"))
	r.finalAnswer(chatA, inA.ID, "The command ran.")
	after := r.say(chatB, bob, "now this")
	r.finalAnswer(chatB, after.ID, "echo: now this")
	assert.False(t, modelSaw(r, "never mind this"), "a cancelled message never reaches Claude")
}

// Messages queued behind a running turn are sent again when the CLI dies.
func TestQueuedMessagesSurviveACLICrash(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "SLOW please")
	r.streaming(chat, in.ID, "slow answer")
	queued := r.say(chat, alice, "QUEUED-ONE waits its turn")
	r.waitBot(chat, "queued note", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && strings.Contains(m.Text, "queued") })
	pid := r.b.ChatPID(state.ChatKey{Chat: state.ChatID(alice)})
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	r.waitBot(chat, "re-send notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == queued.ID && strings.Contains(m.Text, "sent again")
	})
	r.finalAnswer(chat, queued.ID, "echo: QUEUED-ONE waits its turn")
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// A chat whose actor really is wedged (an item stuck in its mailbox) is
// reported after two minutes, so the watchdog is withheld and systemd
// restarts the daemon.
func TestHealthyReportsAWedgedChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	<-r.ready // chats exist only once the bridge runs
	release := r.b.BlockChat(key)
	r.say(chat, alice, "stuck behind a wedged actor")
	require.Eventually(t, func() bool { return r.b.MailboxUpdates(key) == 1 }, wait, 10*time.Millisecond)
	require.NoError(t, r.b.ChatsHealthy(time.Now()), "not yet: a moment is no stall")
	err := r.b.ChatsHealthy(time.Now().Add(3 * time.Minute))
	require.Error(t, err, "a mailbox stuck for 3 minutes is reported")
	assert.Contains(t, err.Error(), "has not handled its mailbox")
	release()
	require.Eventually(t, func() bool { return r.b.ChatsHealthy(time.Now().Add(3*time.Minute)) == nil }, wait, 10*time.Millisecond,
		"healthy again once the actor moves")
}

// TestHealthzKeepsAWedgedChatsIDPrivate: /healthz answers whoever reaches
// the listener, which also serves public webhooks, so a wedged chat fails
// it without the chat's id (a private chat's id is its user's); the
// operator's log, which Healthy's own text feeds (cmd/untether's
// watchdog), still names the chat.
func TestHealthzKeepsAWedgedChatsIDPrivate(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withOps())
	waitReady(r)
	release := r.b.BlockChat(key)
	defer release()
	r.say(chat, alice, "stuck behind a wedged actor")
	require.Eventually(t, func() bool { return r.b.MailboxUpdates(key) == 1 }, wait, 10*time.Millisecond)
	r.b.AgeMailbox(key, 3*time.Minute)

	code, body := r.ops.get(t, "/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Regexp(t, `^unhealthy: a chat has not handled its mailbox for 3m\d+s\n$`, body)
	assert.NotContains(t, body, key.String(), "the chat's id is the operator's alone")

	err := r.b.Healthy(time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chat "+key.String()+" has not handled its mailbox since ", "the log names the chat")
	var private health.Private
	require.ErrorAs(t, err, &private)
}

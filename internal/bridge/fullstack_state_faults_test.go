package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/telegramtest"
)

const stateNoticeText = "untether could not save state"

// logEntries parses the rig's JSON log.
func logEntries(r *rig) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.logs.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// noticesSent counts the state notices the bot sent to chat.
func noticesSent(sn *telegramtest.Snapshot, chat telegramtest.ChatID) int {
	n := 0
	for _, c := range sn.CallsOf("sendMessage") {
		if c.Chat == chat && c.OK() && strings.Contains(c.Params["text"], stateNoticeText) {
			n++
		}
	}
	return n
}

// TestStateWriteFailuresKeepAnswersFlowing: with every state write refused
// (a full disk, injected in the store), turns are still answered; the
// chat gets one notice; each kind of refused write is logged once, with
// the path and the free space. Once writes work again the notice is
// deleted by itself and every refused write is done after all: the
// session, the offset, the turn statistics, no live message and no
// journaled send left behind.
func TestStateWriteFailuresKeepAnswersFlowing(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	ctx := context.Background()
	var full atomic.Bool
	r := newRig(t, withClaude())
	waitReady(r) // the start on a full disk is TestRestartOnAFullDisk's
	r.store.InjectWriteFault(diskFull(&full))
	full.Store(true)

	in := r.say(chat, alice, "STEADY please")
	r.finalAnswer(chat, in.ID, "steady words")
	notice := r.waitBot(chat, "the state notice", func(m telegramtest.Message) bool { return strings.Contains(m.Text, stateNoticeText) })
	assert.Contains(t, notice.Text, "the disk is full")
	assert.Contains(t, notice.Text, "answers still arrive, but a restart now may lose")
	in2 := r.say(chat, alice, "quick one")
	r.finalAnswer(chat, in2.ID, "echo: quick one")
	assert.Equal(t, 1, noticesSent(r.tg.Snapshot(), chat), "one notice, however many writes fail")
	requireLoggedOncePerKind(t, r, "updates", "chat", "outbox", "turn")

	full.Store(false)
	back := time.Now()
	waitDeleted(r, chat, notice.ID)
	t.Logf("the notice was withdrawn %v after writes worked again", time.Since(back).Round(time.Millisecond))
	require.Eventually(t, func() bool { return strings.Contains(r.logs.String(), `"state is saved again"`) }, wait, 10*time.Millisecond)

	// Everything the refused writes carried is on disk now.
	c, err := r.store.GetChat(ctx, key)
	require.NoError(t, err, "the chat's record was written after all")
	assert.NotEmpty(t, c.SessionID)
	turns, err := r.store.RecentTurns(ctx, key, 0)
	require.NoError(t, err)
	assert.Len(t, turns, 2, "both turns' statistics")
	requireNothingLeftOver(t, r)
	off, err := r.store.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(r.tg.Snapshot().UpdateOf(chat, in2.ID)), off, "the offset covers the last message")
	assert.Equal(t, 1, noticesSent(r.tg.Snapshot(), chat))
}

// TestRestartOnAFullDisk: a daemon stopped while the disk refuses writes
// deletes its notice (the next run could not) and logs what is lost; it
// starts again on the full disk and answers, with a notice of its own.
func TestRestartOnAFullDisk(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	var full atomic.Bool
	r := newRig(t, withClaude())
	waitReady(r)
	r.store.InjectWriteFault(diskFull(&full))
	full.Store(true)
	in := r.say(chat, alice, "before the restart")
	r.finalAnswer(chat, in.ID, "echo: before the restart")
	notice := r.waitBot(chat, "the state notice", func(m telegramtest.Message) bool { return strings.Contains(m.Text, stateNoticeText) })

	r.stop()
	m, _ := r.tg.Snapshot().Message(chat, notice.ID)
	assert.True(t, m.Deleted, "the stopping daemon deleted its notice")
	assert.Contains(t, r.logs.String(), "stopping with state writes the disk refused")

	r.opened = func(s *state.Store) { s.InjectWriteFault(diskFull(&full)) }
	r.start()
	waitReady(r)
	in2 := r.say(chat, alice, "after the restart")
	r.finalAnswer(chat, in2.ID, "echo: after the restart")
	notice2 := r.waitBot(chat, "the new run's notice", func(m telegramtest.Message) bool {
		return m.ID != notice.ID && strings.Contains(m.Text, stateNoticeText)
	})
	full.Store(false)
	waitDeleted(r, chat, notice2.ID)
	requireNothingLeftOver(t, r)
	off, err := r.store.LastUpdateID(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(r.tg.Snapshot().UpdateOf(chat, in2.ID)), off)
	assert.Equal(t, 1, finalsTo(r.tg.Snapshot(), chat, in.ID), "the message before the restart is not answered again")
}

// waitReady waits for the rig's bridge to serve updates, failing if its
// Run ends first.
func waitReady(r *rig) {
	r.t.Helper()
	select {
	case <-r.ready:
	case err := <-r.done:
		r.done <- err // for the rig's stop
		r.t.Fatalf("the bridge stopped before serving: %v", err)
	case <-time.After(wait):
		r.t.Fatal("the bridge never served updates")
	}
}

func diskFull(full *atomic.Bool) func() error {
	return func() error {
		if full.Load() {
			return state.ErrDiskFull
		}
		return nil
	}
}

func waitDeleted(r *rig, chat telegramtest.ChatID, id telegramtest.MessageID) {
	r.t.Helper()
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		m, _ := sn.Message(chat, id)
		return m.Deleted
	})
}

func finalsTo(sn *telegramtest.Snapshot, chat telegramtest.ChatID, to telegramtest.MessageID) int {
	n := 0
	for _, m := range sn.BotMessages(chat) {
		if m.ReplyTo == to && strings.Contains(m.Text, "⏱") {
			n++
		}
	}
	return n
}

// requireLoggedOncePerKind checks the refused writes' log lines: each kind
// once, with the path and the free space, and at least the kinds given.
func requireLoggedOncePerKind(t *testing.T, r *rig, kinds ...string) {
	t.Helper()
	perKind := map[string]int{}
	for _, l := range logEntries(r) {
		if msg, _ := l["message"].(string); strings.HasPrefix(msg, "could not save state") {
			kind, _ := l["kind"].(string)
			perKind[kind]++
			assert.Equal(t, r.store.Path(), l["path"])
			assert.Contains(t, l, "free_bytes")
		}
	}
	for kind, n := range perKind {
		assert.Equal(t, 1, n, "kind %s is logged once", kind)
	}
	for _, kind := range kinds {
		assert.Contains(t, perKind, kind)
	}
}

// requireNothingLeftOver checks that no live message, journaled send or
// kept message is left for a restart to act on again.
func requireNothingLeftOver(t *testing.T, r *rig) {
	t.Helper()
	ctx := context.Background()
	live, err := r.store.ListLive(ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "no progress message is left to mark as interrupted")
	pending, err := r.store.PendingOutbox(ctx)
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing delivered is left to send again")
	deferred, err := r.store.DeferredUpdates(ctx)
	require.NoError(t, err)
	assert.Empty(t, deferred, "no handled message is left to handle again")
}

// A message written during a drain while the disk refuses writes is not
// promised for later (issue 24 §2): kept only in memory, the restart
// would lose it, so the user is asked to send it again.
func TestDrainOnAFullDiskPromisesNothing(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	var full atomic.Bool
	r := newRig(t, withClaude())
	waitReady(r)
	r.store.InjectWriteFault(diskFull(&full))
	full.Store(true)
	_, drained := r.drainMidTurn(chat)
	late := r.say(chat, alice, "written during the drain")
	reply := r.waitBot(chat, "the drain's answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == late.ID && strings.Contains(m.Text, "restarting")
	})
	assert.Contains(t, reply.Text, "could not keep this message")
	assert.NotContains(t, reply.Text, "I will handle this message")
	<-drained
}

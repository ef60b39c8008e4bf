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
	"github.com/untether/untether/internal/bridge/tgfake"
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
func noticesSent(sn *tgfake.Snapshot, chat tgfake.ChatID) int {
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
	chat := tgfake.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	ctx := context.Background()
	r := newRig(t, withClaude())
	var full atomic.Bool
	full.Store(true)
	r.store.InjectWriteFault(func() error {
		if full.Load() {
			return state.ErrDiskFull
		}
		return nil
	})

	in := r.say(chat, alice, "STEADY please")
	r.finalAnswer(chat, in.ID, "steady words")
	notice := r.waitBot(chat, "the state notice", func(m tgfake.Message) bool { return strings.Contains(m.Text, stateNoticeText) })
	assert.Contains(t, notice.Text, "the disk is full")
	assert.Contains(t, notice.Text, "answers still arrive, but a restart now may lose")
	in2 := r.say(chat, alice, "quick one")
	r.finalAnswer(chat, in2.ID, "echo: quick one")
	assert.Equal(t, 1, noticesSent(r.tg.Snapshot(), chat), "one notice, however many writes fail")

	perKind := map[string]int{}
	for _, l := range logEntries(r) {
		if strings.HasPrefix(l["message"].(string), "could not save state") {
			perKind[l["kind"].(string)]++
			assert.Equal(t, r.store.Path(), l["path"])
			assert.Contains(t, l, "free_bytes")
		}
	}
	assert.NotEmpty(t, perKind)
	for kind, n := range perKind {
		assert.Equal(t, 1, n, "kind %s is logged once", kind)
	}
	for _, kind := range []string{"updates", "chat", "outbox", "turn"} {
		assert.Contains(t, perKind, kind)
	}

	full.Store(false)
	back := time.Now()
	r.tg.WaitFor(wait, func(sn *tgfake.Snapshot) bool {
		m, _ := sn.Message(chat, notice.ID)
		return m.Deleted
	})
	t.Logf("the notice was withdrawn %v after writes worked again", time.Since(back).Round(time.Millisecond))
	require.Eventually(t, func() bool { return strings.Contains(r.logs.String(), `"state is saved again"`) }, wait, 10*time.Millisecond)

	// Everything the refused writes carried is on disk now.
	c, err := r.store.GetChat(ctx, key)
	require.NoError(t, err, "the chat's record was written after all")
	assert.NotEmpty(t, c.SessionID)
	turns, err := r.store.RecentTurns(ctx, key, 0)
	require.NoError(t, err)
	assert.Len(t, turns, 2, "both turns' statistics")
	live, err := r.store.ListLive(ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "no progress message is left to mark as interrupted")
	pending, err := r.store.PendingOutbox(ctx)
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing delivered is left to send again")
	deferred, err := r.store.DeferredUpdates(ctx)
	require.NoError(t, err)
	assert.Empty(t, deferred, "no handled message is left to handle again")
	off, err := r.store.LastUpdateID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(r.tg.Snapshot().UpdateOf(chat, in2.ID)), off, "the offset covers the last message")
	assert.Equal(t, 1, noticesSent(r.tg.Snapshot(), chat))
}

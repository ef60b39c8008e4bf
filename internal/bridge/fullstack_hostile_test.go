package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/telegramtest"
)

// Telegram is as hostile as the CLI: content the client library cannot
// decode must never stop the daemon or lose the updates behind it
// (issue 16). These tests run the real stack: go-telegram/bot, the bridge
// and the real CLI, against the fake Bot API sending raw updates.

// unknownOrigin is a forward origin of a type go-telegram/bot v1.19.0 does
// not know; without the guard it fails every getUpdates batch it is in.
var unknownOrigin = json.RawMessage(`{"type":"story_author","date":1700000000,"author_chat":{"id":-1001,"type":"channel","title":"Stories"}}`)

// logLine is one JSON line of the bridge's log.
type logLine map[string]any

func (l logLine) str(k string) string { s, _ := l[k].(string); return s }

func (l logLine) updateID() int64 { f, _ := l["update_id"].(float64); return int64(f) }

// logLines returns the log lines whose message starts with msg.
func (r *rig) logLines(msg string) []logLine { return logLinesOf(r.logs.String(), msg) }

// waitLog waits for a log line with msg about update id.
func (r *rig) waitLog(msg string, id telegramtest.UpdateID) logLine {
	r.t.Helper()
	var found logLine
	require.Eventually(r.t, func() bool {
		for _, l := range r.logLines(msg) {
			if l.updateID() == int64(id) {
				found = l
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond, "log line %q for update %d; log:\n%s", msg, id, r.logs.String())
	return found
}

// updateOf returns the id of the update that carried message m.
func (r *rig) updateOf(chat telegramtest.ChatID, m telegramtest.MessageID) telegramtest.UpdateID {
	r.t.Helper()
	id := r.tg.Snapshot().UpdateOf(chat, m)
	require.NotZero(r.t, id, "no update carried message %d", m)
	return id
}

func (r *rig) prompts() []string {
	var out []string
	for _, c := range r.claude.API.ModelCalls() {
		out = append(out, c.LastPrompt())
	}
	return out
}

func TestForwardWithUnknownOriginIsAnswered(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	warm := r.say(chat, alice, "warm up")
	r.finalAnswer(chat, warm.ID, "echo: warm up")

	fwd := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "U"}, "what do you make of this forward",
		telegramtest.WithRawFields(map[string]json.RawMessage{"forward_origin": unknownOrigin}))
	id := r.updateOf(chat, fwd.ID)
	r.finalAnswer(chat, fwd.ID, "Forwarded from an unknown sender")
	assert.True(t, r.modelSaw("what do you make of this forward"), "the user's text reached Claude")

	line := r.waitLog("handling an update without the parts", id)
	assert.Equal(t, "message", line.str("kind"))
	repairs := fmt.Sprint(line["repairs"])
	assert.Contains(t, repairs, "message.forward_origin")
	assert.Contains(t, repairs, "replaced")
	assert.Contains(t, repairs, "unsupported MessageOrigin type")

	next := r.say(chat, alice, "hello after the forward")
	r.finalAnswer(chat, next.ID, "echo: hello after the forward")
	n := 0
	for _, l := range r.logLines("handling an update without the parts") {
		if l.updateID() == int64(id) {
			n++
		}
	}
	assert.Equal(t, 1, n, "logged once")
	assert.NoError(t, r.b.Healthy(time.Now()))
}

// TestHostileUpdatesAreSkippedAndOffsetsSurviveRestart sends, between two
// normal messages, everything go-telegram/bot v1.19.0 would choke on: an
// entry without an update_id, an update of a kind nobody asked for, a
// message the repairer cannot save, and a forward of an unknown origin.
// The messages are answered, the others skipped with a log line, and the
// persisted offset covers all of them across a restart.
func TestHostileUpdatesAreSkippedAndOffsetsSurviveRestart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	first := r.say(chat, alice, "before the storm")
	r.finalAnswer(chat, first.ID, "echo: before the storm")

	noID := r.tg.InjectRaw("no update_id", func(telegramtest.UpdateID) json.RawMessage {
		return json.RawMessage(`{"message":{"message_id":1,"chat":{"id":1001,"type":"private"},"date":1,"text":"NOID"}}`)
	})
	guest := r.tg.InjectRawUpdate("guest_message", json.RawMessage(`{"guest":{"id":5},"text":"hi"}`))
	broken := r.tg.InjectRawUpdate("message", json.RawMessage(fmt.Sprintf(
		`{"message_id":"seven","from":{"id":%d,"is_bot":false,"first_name":"U"},"chat":{"id":%d,"type":"private"},"date":1,"text":"UNREADABLE"}`, alice, alice)))
	fwd := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "U"}, "a forward in the storm",
		telegramtest.WithRawFields(map[string]json.RawMessage{"forward_origin": unknownOrigin}))
	// Answered before the next message, which would otherwise join the
	// forward as its comment (batch.go).
	r.finalAnswer(chat, fwd.ID, "a forward in the storm")
	after := r.say(chat, alice, "after the storm")
	afterID := r.updateOf(chat, after.ID)
	r.finalAnswer(chat, after.ID, "echo: after the storm")
	r.waitLog("skipping an update of a kind untether does not handle", guest)
	skip := r.waitLog("skipping an update whose content could not be read", broken)
	assert.Equal(t, "message", skip.str("kind"))
	repairs, _ := skip["repairs"].([]any)
	require.Len(t, repairs, 1, "%v", skip)
	rep, _ := repairs[0].(map[string]any)
	assert.Equal(t, "message", rep["path"])
	assert.Equal(t, "dropped", rep["action"])
	assert.Contains(t, rep["error"], "message_id", "the log says what could not be read")
	require.NotEmpty(t, r.logLines("dropping getUpdates entries without a readable update_id"))
	for _, p := range r.prompts() {
		assert.NotContains(t, p, "UNREADABLE")
		assert.NotContains(t, p, "NOID")
	}
	assert.NoError(t, r.b.Healthy(time.Now()), "skipped updates are progress")

	// Every update is confirmed and the offset persisted past all of them.
	ctx := context.Background()
	require.Eventually(t, func() bool {
		off, err := r.store.LastUpdateID(ctx)
		return err == nil && off >= int64(afterID)
	}, wait, 10*time.Millisecond)
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return sn.ConfirmedOffset > afterID })
	assert.Less(t, noID, afterID)

	r.stop()
	polls := len(r.tg.Snapshot().CallsOf("getUpdates"))
	r.start()
	select {
	case <-r.ready:
	case <-time.After(wait):
		t.Fatal("the restarted bridge never became ready")
	}
	again := r.say(chat, alice, "after the restart")
	r.finalAnswer(chat, again.ID, "echo: after the restart")
	calls := r.tg.Snapshot().CallsOf("getUpdates")[polls:]
	require.NotEmpty(t, calls)
	assert.Equal(t, strconv.FormatInt(int64(afterID)+1, 10), calls[0].Params["offset"],
		"the restarted bridge asks from just past the last update, skipped ones included")
	count := map[string]int{}
	for _, p := range r.prompts() {
		count[p]++
		if strings.Contains(p, "a forward in the storm") {
			count["a forward in the storm"]++ // the forward's prompt names its origin first
		}
	}
	assert.Equal(t, 1, count["a forward in the storm"], "nothing is handled twice across the restart")
	assert.Equal(t, 1, count["after the storm"])
	assert.Len(t, r.logLines("skipping an update whose content could not be read"), 1, "not skipped again after the restart")
}

// TestUnreadablePollsAreReported: a server that keeps answering getUpdates
// with something no update can be read from gets no progress counted:
// PollTrouble (STATUS=) says so at once and Healthy fails once it lasts;
// when the server recovers, so does the daemon.
func TestUnreadablePollsAreReported(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	select {
	case <-r.ready:
	case <-time.After(wait):
		t.Fatal("never ready")
	}
	require.NoError(t, r.b.Healthy(time.Now()))
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "getUpdates" },
		telegramtest.Fault{Code: 200, Body: `{"ok":true,"result":{"update_id":1}}`})
	// A message makes the waiting long poll return; the polls after it
	// read the broken body.
	in := r.say(chat, alice, "are you there")
	var trouble string
	require.Eventually(t, func() bool {
		trouble = r.b.PollTrouble(time.Now())
		return strings.Contains(trouble, "getUpdates responses in a row")
	}, wait, 20*time.Millisecond)
	assert.Contains(t, trouble, "Telegram updates unreadable")
	err := r.b.Healthy(time.Now().Add(2 * time.Minute))
	require.Error(t, err, "no progress: the watchdog is no longer fed")
	assert.Contains(t, err.Error(), "could not be read")
	assert.Contains(t, err.Error(), "result is not a list")
	require.NotEmpty(t, r.logLines("getUpdates returned nothing untether can read"))

	stop()
	r.finalAnswer(chat, in.ID, "echo: are you there")
	require.Eventually(t, func() bool { return r.b.PollTrouble(time.Now()) == "" }, wait, 20*time.Millisecond)
	assert.NoError(t, r.b.Healthy(time.Now()))
	back := r.say(chat, alice, "back again")
	r.finalAnswer(chat, back.ID, "echo: back again")
}

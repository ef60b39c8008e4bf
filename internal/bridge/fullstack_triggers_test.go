package bridge_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/metrics"
	"github.com/untether/untether/internal/service/webhook"
	"github.com/untether/untether/internal/telegramtest"
)

// These tests send real GitHub webhook payloads (testdata/webhooks/github,
// from GitHub's documentation), signed as GitHub signs them, to the
// daemon's listener, and follow each run to its answer in the chat.

const ciSecret = "ci-secret-0123456789abcdef"

// ciTrigger runs in alice's private chat when CI failed.
var ciTrigger = config.Trigger{Name: "ci-failed", Secret: config.NewSecret(ciSecret), ChatID: int64(alice),
	Prompt: `{{if eq .workflow_run.conclusion "failure"}}CI failed on {{.repository.full_name}} ` +
		`({{.workflow_run.head_branch}}, run {{.workflow_run.run_number}}): {{.workflow_run.html_url}}{{end}}`}

// ciPrompt is ciTrigger's prompt rendered over workflow_run.completed.failure.json.
const ciPrompt = "CI failed on acme-corp/widgets (fix/rounding, run 412): https://github.com/acme-corp/widgets/actions/runs/14823390517"

// ciNote is what a run of ciTrigger says in its progress and answer.
const ciNote = "⚡ trigger ci-failed"

func githubPayload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "webhooks", "github", name))
	require.NoError(t, err)
	return b
}

// hook posts a delivery to /hooks/name as GitHub does, signed with
// secret, and returns the status and body of the answer.
func (r *rig) hook(name, event, delivery string, body []byte, secret string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.ops.url+"/hooks/"+name, bytes.NewReader(body))
	require.NoError(r.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.EventHeader, event)
	req.Header.Set(webhook.DeliveryHeader, delivery)
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, body))
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	return resp.StatusCode, string(b)
}

// ciFailed posts the failed workflow_run delivery with id delivery.
func (r *rig) ciFailed(delivery string) (int, string) {
	r.t.Helper()
	return r.hook("ci-failed", "workflow_run", delivery, githubPayload(r.t, "workflow_run.completed.failure.json"), ciSecret)
}

// triggerAnswer waits for the answer of a run of ciTrigger.
func (r *rig) triggerAnswer() telegramtest.Message {
	r.t.Helper()
	return r.waitBot(telegramtest.ChatID(alice), "the webhook's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: "+ciPrompt) && strings.Contains(m.Text, "⏱")
	})
}

// busy starts a turn that streams for a few seconds, and returns its
// message once its progress shows.
func (r *rig) busy(chat telegramtest.ChatID) telegramtest.Message {
	r.t.Helper()
	in := r.say(chat, alice, "STEADY please")
	r.waitBot(chat, "the steady turn's progress", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	return in
}

// runWhileBusy makes the chat busy and delivers ciTrigger's payload
// meanwhile: accepted, its run waits. It returns the busy turn's message.
func (r *rig) runWhileBusy(chat telegramtest.ChatID) telegramtest.Message {
	r.t.Helper()
	in := r.busy(chat)
	code, body := r.ciFailed("d-1")
	require.Equal(r.t, http.StatusAccepted, code, body)
	return in
}

// settled sends a message and waits for its answer: whatever the chat had
// queued before it has run by then.
func (r *rig) settled(text string) {
	r.t.Helper()
	r.ask(telegramtest.ChatID(alice), text)
}

// reachedClaudeOnceInOrder checks that each prompt reached Claude once, as
// a turn of its own, and that they reached it in the order given.
func (r *rig) reachedClaudeOnceInOrder(prompts ...string) {
	r.t.Helper()
	seq := make([]int, len(prompts))
	for i, p := range prompts {
		assert.Equal(r.t, 1, modelCallsWith(r.claude.API, p), "run once, as a turn of its own: %s", p)
		seq[i] = r.callFor(p).Seq
	}
	assert.True(r.t, slices.IsSorted(seq), "the runs reach Claude in the order they came: %v", seq)
}

// TestWebhookRunsInChat: a signed workflow_run delivery becomes the
// trigger's prompt, rendered from the payload; the real CLI answers it in
// the chat, and the answer says which trigger ran it. A forged delivery
// runs nothing. Both are counted.
func TestWebhookRunsInChat(t *testing.T) {
	r := newRig(t, withOps(ciTrigger))
	waitReady(r)
	code, body := r.hook("ci-failed", "workflow_run", "forged-1", githubPayload(t, "workflow_run.completed.failure.json"), "not-the-secret-123")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	code, body = r.hook("nightly", "workflow_run", "d-0", []byte(`{}`), ciSecret)
	assert.Equal(t, http.StatusNotFound, code, body)

	code, body = r.ciFailed("d-1")
	require.Equal(t, http.StatusAccepted, code, body)
	answer := r.triggerAnswer()
	assert.Contains(t, answer.Text, ciNote)
	assert.Zero(t, answer.ReplyTo, "nobody's message is answered")
	r.settled("after the webhook")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, ciPrompt))
	runs, err := r.store.TriggerRuns(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs, "a run that reached the CLI is forgotten")

	var s scrape
	require.Eventually(t, func() bool { // the answer may be seen before the hooks after it ran
		s = r.ops.scrape(t)
		return s.value(metrics.NameTurnsFinished, "outcome", "answered") == 2
	}, wait, 20*time.Millisecond, "the webhook's turn and the message's")
	assert.Equal(t, 1.0, s.value(metrics.NameWebhookDelivered, "trigger", "ci-failed", "result", "accepted"))
	assert.Equal(t, 1.0, s.value(metrics.NameWebhookDelivered, "trigger", "ci-failed", "result", "bad_signature"))
	assert.Equal(t, 1.0, s.value(metrics.NameWebhookDelivered, "trigger", webhook.UnknownTrigger, "result", "unknown"))
}

// TestWebhookReplayRunsOnce: the same delivery sent again (by its id, or
// its body under a new id) is answered 200 and not run, also after a
// restart, since what was seen is in the state database.
func TestWebhookReplayRunsOnce(t *testing.T) {
	r := newRig(t, withOps(ciTrigger))
	waitReady(r)
	code, _ := r.ciFailed("d-1")
	require.Equal(t, http.StatusAccepted, code)
	code, body := r.ciFailed("d-1")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "already received")
	code, _ = r.ciFailed("d-2") // the captured body under a new id
	assert.Equal(t, http.StatusOK, code)
	r.triggerAnswer()

	r.stop()
	r.start()
	waitReady(r)
	code, _ = r.ciFailed("d-1")
	assert.Equal(t, http.StatusOK, code, "a replay after a restart")
	code, _ = r.ciFailed("d-3")
	assert.Equal(t, http.StatusOK, code, "the body after a restart")
	r.settled("after the replays")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, ciPrompt), "run once")
	assert.Equal(t, 2.0, r.ops.scrape(t).value(metrics.NameWebhookDelivered, "trigger", "ci-failed", "result", "replay"),
		"counted since this start")
}

// TestWebhookWaitsForBusyChat: a delivery that comes while the chat's turn
// runs is accepted at once and waits: its prompt goes to Claude after the
// turn ended, as a turn of its own, never folded into the running one.
func TestWebhookWaitsForBusyChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withOps(ciTrigger))
	waitReady(r)
	steady := r.runWhileBusy(chat)
	first := r.finalAnswer(chat, steady.ID, "steady words")
	answer := r.triggerAnswer()
	assert.Greater(t, answer.ID, first.ID, "the webhook's answer comes after the running turn's")
	assert.NotContains(t, first.Text, ciNote)
	assert.Contains(t, answer.Text, ciNote)
	assert.Equal(t, 1, modelCallsWith(r.claude.API, ciPrompt), "its own turn: its prompt is the last one of its model call")
	steadyCall, ciCall := r.callFor("STEADY please"), r.callFor(ciPrompt)
	assert.Greater(t, ciCall.Seq, steadyCall.Seq)
	assert.False(t, steadyCall.AnyUserContains("CI failed"), "not folded into the running turn")
}

// TestWebhookRunSurvivesRestart: a run waiting for a busy chat when
// untether stops (killed, or drained) runs after the restart, once. While
// the drain runs, new deliveries are refused with 503, so GitHub's retry
// reaches the next start.
func TestWebhookRunSurvivesRestart(t *testing.T) {
	for _, stop := range []string{"crash", "drain"} {
		t.Run(stop, func(t *testing.T) {
			chat := telegramtest.ChatID(alice)
			r := newRig(t, withOps(ciTrigger))
			waitReady(r)
			steady := r.runWhileBusy(chat)
			runs, err := r.store.TriggerRuns(context.Background())
			require.NoError(t, err)
			require.Len(t, runs, 1, "kept while it waits")
			assert.Equal(t, ciPrompt, runs[0].Prompt)

			if stop == "crash" {
				r.crash()
			} else {
				b, drained := r.b, make(chan struct{})
				go func() { defer close(drained); r.drain(wait) }()
				require.Eventually(t, b.Draining, wait, time.Millisecond)
				other := bytes.Replace(githubPayload(t, "workflow_run.completed.failure.json"), []byte("fix/rounding"), []byte("fix/other"), 1)
				code, body := r.hook("ci-failed", "workflow_run", "d-2", other, ciSecret)
				assert.Equal(t, http.StatusServiceUnavailable, code, "a delivery during the drain")
				assert.Contains(t, body, "untether is restarting")
				r.finalAnswer(chat, steady.ID, "steady words") // the drain lets the running turn finish
				<-drained
			}
			assert.Zero(t, modelCallsWith(r.claude.API, ciPrompt), "it did not run before the stop")

			r.start()
			answer := r.triggerAnswer()
			assert.Contains(t, answer.Text, ciNote)
			r.settled("after the restart")
			assert.Equal(t, 1, modelCallsWith(r.claude.API, ciPrompt), "run once")
			assert.Zero(t, modelCallsWith(r.claude.API, strings.Replace(ciPrompt, "fix/rounding", "fix/other", 1)),
				"a delivery refused during the drain never runs")
			runs, err = r.store.TriggerRuns(context.Background())
			require.NoError(t, err)
			assert.Empty(t, runs)
		})
	}
}

// TestWebhookRunsInItsProject: a trigger naming a project moves the chat
// there (and says so) before its prompt goes out; the CLI works in the
// project's directory. The issues payload's fields reach the prompt.
func TestWebhookRunsInItsProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	beta := realDir(t)
	const secret = "issue-secret-fedcba9876543210"
	issues := config.Trigger{Name: "new_issue", Secret: config.NewSecret(secret), ChatID: int64(alice), Project: "beta",
		Prompt: "New issue #{{.issue.number}} in {{.repository.full_name}}: {{.issue.title}}"}
	r := newRig(t, withProjects(map[string]config.Project{"beta": {Path: beta}}), withOps(issues))
	waitReady(r)
	r.ask(chat, "working in default")

	code, body := r.hook("new_issue", "issues", "i-1", githubPayload(t, "issues.opened.json"), secret)
	require.Equal(t, http.StatusAccepted, code, body)
	const prompt = "New issue #91 in acme-corp/widgets: Checkout total is off by one cent for 3 × €0.335"
	moved := r.waitBot(chat, "the switch", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "runs in project beta") })
	assert.Equal(t, "⚡ Trigger new_issue runs in project beta, so this chat works there now: "+beta+". /project switches back.", moved.Text)
	answer := r.waitBot(chat, "the webhook's answer", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "echo: "+prompt) && strings.Contains(m.Text, "⏱")
	})
	assert.Contains(t, answer.Text, "⚡ trigger new_issue")
	assert.True(t, ranIn(r.callFor(prompt), beta), "the CLI ran in beta's directory")
}

// TestWebhookRunWhoseProjectIsGone: a run kept across a restart after
// which its trigger's project is no longer configured does not run (in
// whatever project the chat is in) and the chat is told why; it is not
// kept for another try.
func TestWebhookRunWhoseProjectIsGone(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	inBeta := ciTrigger
	inBeta.Project = "beta"
	r := newRig(t, withProjects(map[string]config.Project{"beta": {Path: realDir(t)}}), withOps(inBeta))
	waitReady(r)
	r.runWhileBusy(chat)
	r.crash()

	r.mutate = nil // beta and its trigger are gone from the configuration
	r.ops.triggers = nil
	r.start()
	told := r.waitBot(chat, "why it did not run", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "did not run") })
	assert.Equal(t, "⚠️ Trigger ci-failed did not run: its project beta is no longer in untether's configuration.", told.Text)
	r.settled("after the restart")
	assert.Zero(t, modelCallsWith(r.claude.API, ciPrompt))
	runs, err := r.store.TriggerRuns(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs, "told, so not kept")
}

// TestWebhookOnAFullDisk: while the state database refuses writes, a
// delivery cannot be kept, so it is answered 503 and nothing runs; the
// sender's retry once the disk takes writes again runs, once.
func TestWebhookOnAFullDisk(t *testing.T) {
	var full atomic.Bool
	r := newRig(t, withOps(ciTrigger))
	waitReady(r)
	r.store.InjectWriteFault(diskFull(&full))
	full.Store(true)
	code, body := r.ciFailed("d-1")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "the state database refuses writes")

	full.Store(false)
	code, body = r.ciFailed("d-1")
	require.Equal(t, http.StatusAccepted, code, body)
	r.triggerAnswer()
	r.settled("after the retry")
	assert.Equal(t, 1, modelCallsWith(r.claude.API, ciPrompt))
}

// ciFailedOn posts ciTrigger's failed workflow_run delivery for branch
// (the body differs by branch, so it is not a replay) and returns the
// prompt it renders.
func (r *rig) ciFailedOn(branch, delivery string) string {
	r.t.Helper()
	body := bytes.Replace(githubPayload(r.t, "workflow_run.completed.failure.json"), []byte("fix/rounding"), []byte(branch), 1)
	code, resp := r.hook("ci-failed", "workflow_run", delivery, body, ciSecret)
	require.Equal(r.t, http.StatusAccepted, code, resp)
	return strings.Replace(ciPrompt, "fix/rounding", branch, 1)
}

// TestWebhookRunsGoOldestFirst: two runs that come while the chat is busy
// go in their order once it is free, each in a turn of its own, and a
// third that comes as the chat is freed goes after them. The chat frees as its turn ends, or as its CLI dies mid-turn
// (which ends the turn too). Both free the chat and let the waiting runs
// go at once, so the third seldom finds the chat free with runs still
// waiting: this checks the order on both paths more than it can catch an
// overtaking run (TestWaitingRunsOfBothKindsGoOldestFirst catches runs of
// two modules out of order).
func TestWebhookRunsGoOldestFirst(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	for _, tc := range []struct {
		name string
		// then frees the chat, then delivers the third.
		then func(r *rig, in telegramtest.Message, third func())
	}{
		{"turn ends", func(r *rig, in telegramtest.Message, third func()) {
			r.finalAnswer(chat, in.ID, "slow answer")
			third()
		}},
		{"cli dies", func(r *rig, in telegramtest.Message, third func()) {
			pid := r.b.ChatPID(key)
			require.NotZero(r.t, pid)
			require.NoError(r.t, syscall.Kill(pid, syscall.SIGKILL))
			r.waitBot(chat, "crash notice", func(m telegramtest.Message) bool {
				return m.ReplyTo == in.ID && strings.Contains(m.Text, "stopped unexpectedly")
			})
			third()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, withOps(ciTrigger))
			waitReady(r)
			in := r.say(chat, alice, "SLOW please") // about 9s of streaming
			r.streaming(chat, in.ID, "slow answer")
			first := r.ciFailedOn("fix/first", "d-1")
			second := r.ciFailedOn("fix/second", "d-2")
			var third string
			tc.then(r, in, func() { third = r.ciFailedOn("fix/third", "d-3") })

			prompts := []string{first, second, third}
			for _, p := range prompts {
				r.waitBot(chat, "the answer to "+p, func(m telegramtest.Message) bool {
					return strings.Contains(m.Text, "echo: "+p) && strings.Contains(m.Text, "⏱")
				})
			}
			r.settled("after the runs")
			r.reachedClaudeOnceInOrder(prompts...)
			runs, err := r.store.TriggerRuns(context.Background())
			require.NoError(t, err)
			assert.Empty(t, runs, "each run is forgotten once it reached the CLI")
		})
	}
}

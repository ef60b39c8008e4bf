package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/metrics"
)

const (
	ciSecret    = "ci-secret-0123456789abcdef"
	issueSecret = "issue-secret-fedcba9876543210"
)

// payload reads a GitHub delivery body from testdata/webhooks/github.
func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "webhooks", "github", name))
	require.NoError(t, err)
	return b
}

// chat stands in for the bridge: it takes runs, or refuses them with err.
type chat struct {
	mu   sync.Mutex
	runs []Run
	err  error
}

func (c *chat) Fire(_ context.Context, r Run) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.runs = append(c.runs, r)
	return nil
}

func (c *chat) taken() []Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Run(nil), c.runs...)
}

func (c *chat) refuse(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// rig is a handler behind a real listener, with a clock the test moves
// and its log and metrics at hand.
type rig struct {
	h     *Handler
	url   string
	chat  *chat
	log   *bytes.Buffer
	m     *metrics.Metrics
	mu    sync.Mutex
	clock time.Time
}

func (r *rig) now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clock
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock = r.clock.Add(d)
}

var triggers = []config.Trigger{
	{Name: "ci-failed", Secret: config.NewSecret(ciSecret), ChatID: 1001, Prompt: "{{if eq .workflow_run.conclusion \"failure\"}}" +
		"CI failed on {{.repository.full_name}} ({{.workflow_run.head_branch}}, run {{.workflow_run.run_number}}, " +
		"PR #{{(index .workflow_run.pull_requests 0).number}}): {{.workflow_run.html_url}}\n" +
		"Commit: {{.workflow_run.head_commit.message | truncate 25}}\nRun id {{.workflow_run.id}}, previous attempt [{{.workflow_run.previous_attempt_url}}]{{end}}"},
	{Name: "new_issue", Secret: config.NewSecret(issueSecret), ChatID: -1001234567890, ThreadID: 7, Project: "api",
		Prompt: "New issue #{{.issue.number}} in {{.repository.full_name}} by {{.issue.user.login}}: {{.issue.title}}\n" +
			"Labels: {{range .issue.labels}}{{.name}} {{end}}\nMilestone: {{.issue.milestone.title | default \"none\"}}\n\n{{.issue.body}}"},
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	r := &rig{chat: &chat{}, log: &bytes.Buffer{}, clock: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		m: metrics.New(metrics.Build{}, zerolog.Nop())}
	o.Fire, o.Now, o.Observe = r.chat, r.now, r.m
	o.Log = zerolog.New(&syncWriter{w: r.log})
	r.h = New(o)
	require.NoError(t, r.h.SetTriggers(triggers))
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/{name}", r.h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (r *rig) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// delivery is one POST as GitHub makes it.
type delivery struct {
	name, event, id string
	body            []byte
	signature       string // "" signs with secret; "-" sends none
	secret          string
	contentType     string
}

func (r *rig) send(t *testing.T, d delivery) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+"/hooks/"+d.name, bytes.NewReader(d.body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if d.contentType != "" {
		req.Header.Set("Content-Type", d.contentType)
	}
	req.Header.Set("User-Agent", "GitHub-Hookshot/0a1b2c3")
	if d.event != "" {
		req.Header.Set(EventHeader, d.event)
	}
	if d.id != "" {
		req.Header.Set(DeliveryHeader, d.id)
	}
	switch d.signature {
	case "":
		req.Header.Set(SignatureHeader, Sign(d.secret, d.body))
	case "-":
	default:
		req.Header.Set(SignatureHeader, d.signature)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func ciDelivery(t *testing.T, id string) delivery {
	return delivery{name: "ci-failed", event: "workflow_run", id: id, body: payload(t, "workflow_run.completed.failure.json"), secret: ciSecret}
}

func issueDelivery(t *testing.T, id string) delivery {
	return delivery{name: "new_issue", event: "issues", id: id, body: payload(t, "issues.opened.json"), secret: issueSecret}
}

// TestGitHubTestVector: Sign and verify agree with the example GitHub's
// documentation gives for validating deliveries.
func TestGitHubTestVector(t *testing.T) {
	const secret, body = "It's a Secret to Everybody", "Hello, World!"
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	assert.Equal(t, want, Sign(secret, []byte(body)))
	assert.Empty(t, verify(secret, []byte(body), want))
	assert.NotEmpty(t, verify(secret, []byte(body+" "), want))
	assert.NotEmpty(t, verify(secret+" ", []byte(body), want))
}

// TestDeliveries: real-shaped GitHub deliveries run their trigger's prompt
// in its chat.
func TestDeliveries(t *testing.T) {
	r := newRig(t, Options{})
	code, _, body := r.send(t, ciDelivery(t, "8c0e9f20-2613-11f0-8a5e-d1a2b3c4d5e6"))
	assert.Equal(t, http.StatusAccepted, code, body)
	code, _, body = r.send(t, issueDelivery(t, "a4b1c2d3-2613-11f0-9c1d-0e1f2a3b4c5d"))
	assert.Equal(t, http.StatusAccepted, code, body)

	runs := r.chat.taken()
	require.Len(t, runs, 2)
	assert.Equal(t, triggers[0].Name, runs[0].Trigger.Name)
	assert.Equal(t, int64(1001), runs[0].Trigger.ChatID)
	assert.Equal(t, "workflow_run", runs[0].Event)
	assert.Equal(t, "8c0e9f20-2613-11f0-8a5e-d1a2b3c4d5e6", runs[0].Delivery)
	assert.False(t, runs[0].Truncated)
	assert.Equal(t, "CI failed on acme-corp/widgets (fix/rounding, run 412, PR #88): https://github.com/acme-corp/widgets/actions/runs/14823390517\n"+
		"Commit: Round prices half to even…\nRun id 14823390517, previous attempt []", runs[0].Prompt)

	assert.Equal(t, int64(-1001234567890), runs[1].Trigger.ChatID)
	assert.Equal(t, int64(7), runs[1].Trigger.ThreadID)
	assert.Equal(t, "api", runs[1].Trigger.Project)
	assert.Equal(t, "New issue #91 in acme-corp/widgets by mira-dev: Checkout total is off by one cent for 3 × €0.335\n"+
		"Labels: bug \nMilestone: none\n\n"+
		"Steps:\n1. Add three widgets at €0.335 each.\n2. Go to checkout.\n\nExpected €1.00 (1.005 rounded half to even), got €1.01.\n\n"+
		"<!-- the <b>tags</b> & \"quotes\" stay as typed -->", runs[1].Prompt)

	assert.Contains(t, r.logText(), `"message":"webhook accepted"`)
	assert.NotContains(t, r.logText(), ciSecret)
	assert.NotContains(t, r.logText(), issueSecret)
}

// TestFormEncoded: GitHub's application/x-www-form-urlencoded deliveries
// carry the JSON in payload, and are signed over the raw form.
func TestFormEncoded(t *testing.T) {
	r := newRig(t, Options{})
	d := ciDelivery(t, "form-1")
	d.body = []byte(url.Values{"payload": {string(d.body)}}.Encode())
	d.contentType = "application/x-www-form-urlencoded"
	code, _, body := r.send(t, d)
	require.Equal(t, http.StatusAccepted, code, body)
	require.Len(t, r.chat.taken(), 1)
	assert.True(t, strings.HasPrefix(r.chat.taken()[0].Prompt, "CI failed on acme-corp/widgets"))
}

// TestRefusals: nothing runs for a delivery that fails a check, and each
// gets its status.
func TestRefusals(t *testing.T) {
	other := Sign("not the secret at all", payload(t, "workflow_run.completed.failure.json"))
	ci := func(edit func(*delivery)) delivery { d := ciDelivery(t, ""); edit(&d); return d }
	cases := []struct {
		name   string
		d      delivery
		code   int
		result string
	}{
		{"wrong signature", ci(func(d *delivery) { d.signature = other }), http.StatusUnauthorized, ResultBadSignature},
		{"signed with another trigger's secret", ci(func(d *delivery) { d.secret = issueSecret }), http.StatusUnauthorized, ResultBadSignature},
		{"no signature", ci(func(d *delivery) { d.signature = "-" }), http.StatusUnauthorized, ResultBadSignature},
		{"sha1 signature", ci(func(d *delivery) { d.signature = "sha1=" + strings.Repeat("0", 40) }), http.StatusUnauthorized, ResultBadSignature},
		{"not hex", ci(func(d *delivery) { d.signature = "sha256=" + strings.Repeat("z", 64) }), http.StatusUnauthorized, ResultBadSignature},
		{"short", ci(func(d *delivery) { d.signature = "sha256=abcd" }), http.StatusUnauthorized, ResultBadSignature},
		{"body changed after signing", ci(func(d *delivery) {
			d.signature = Sign(ciSecret, d.body)
			d.body = bytes.Replace(d.body, []byte(`"failure"`), []byte(`"success"`), 1)
		}), http.StatusUnauthorized, ResultBadSignature},
		{"unknown name", ci(func(d *delivery) { d.name = "nope" }), http.StatusNotFound, ResultUnknown},
		{"name in other case", ci(func(d *delivery) { d.name = "CI-failed" }), http.StatusNotFound, ResultUnknown},
		{"over the cap", ci(func(d *delivery) { d.body = append(d.body, bytes.Repeat([]byte(" "), 64<<10)...) }), http.StatusRequestEntityTooLarge, ResultTooLarge},
		{"not JSON", ci(func(d *delivery) { d.body = []byte("hello") }), http.StatusBadRequest, ResultBadBody},
		{"two JSON values", ci(func(d *delivery) { d.body = []byte(`{} {}`) }), http.StatusBadRequest, ResultBadBody},
		{"form without payload", ci(func(d *delivery) {
			d.body, d.contentType = []byte("x=1"), "application/x-www-form-urlencoded"
		}), http.StatusBadRequest, ResultBadBody},
		{"prompt renders empty", ci(func(d *delivery) { d.body = []byte(`{"workflow_run":{"conclusion":"success"}}`) }), http.StatusUnprocessableEntity, ResultEmptyPrompt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{MaxBody: 32 << 10})
			code, _, body := r.send(t, tc.d)
			assert.Equal(t, tc.code, code, body)
			assert.Empty(t, r.chat.taken(), "nothing runs")
			label := tc.d.name
			if tc.result == ResultUnknown {
				label = UnknownTrigger
			}
			assert.Contains(t, scrape(t, r.m), fmt.Sprintf(`untether_webhook_deliveries_total{result=%q,trigger=%q} 1`, tc.result, label))
			assert.NotContains(t, r.logText(), ciSecret)
		})
	}
}

// scrape returns the metrics' exposition text.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestPing: GitHub's ping is answered, runs nothing, and must be signed
// like any delivery.
func TestPing(t *testing.T) {
	r := newRig(t, Options{})
	ping := delivery{name: "ci-failed", event: "ping", id: "p-1", body: payload(t, "ping.json"), secret: ciSecret}
	code, _, body := r.send(t, ping)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "pong")
	ping.signature = "-"
	code, _, _ = r.send(t, ping)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Empty(t, r.chat.taken())
}

// TestReplay: a delivery runs once, whether it comes again with the same
// delivery id (GitHub's redelivery), under a new id (a captured delivery
// sent again), or its id with another body; per trigger, within the window.
func TestReplay(t *testing.T) {
	r := newRig(t, Options{})
	first := ciDelivery(t, "d-1")
	code, _, _ := r.send(t, first)
	require.Equal(t, http.StatusAccepted, code)

	code, _, body := r.send(t, first)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "already received; not run again\n", body)

	newID := ciDelivery(t, "d-2")
	code, _, _ = r.send(t, newID)
	assert.Equal(t, http.StatusOK, code, "same body under a new delivery id")

	noID := ciDelivery(t, "")
	code, _, _ = r.send(t, noID)
	assert.Equal(t, http.StatusOK, code, "same body without a delivery id")

	sameID := ciDelivery(t, "d-1")
	sameID.body = bytes.Replace(sameID.body, []byte(`"run_attempt": 1`), []byte(`"run_attempt": 2`), 1)
	code, _, _ = r.send(t, sameID)
	assert.Equal(t, http.StatusOK, code, "same delivery id with another body")
	assert.Len(t, r.chat.taken(), 1)

	// The same body to another trigger is another delivery.
	toIssue := ciDelivery(t, "d-1")
	toIssue.name, toIssue.secret = "new_issue", issueSecret
	code, _, _ = r.send(t, toIssue)
	assert.Equal(t, http.StatusAccepted, code)
	assert.Len(t, r.chat.taken(), 2)

	// After the window, the first delivery is news again.
	r.advance(DefaultReplayWindow + time.Second)
	code, _, _ = r.send(t, first)
	assert.Equal(t, http.StatusAccepted, code)
	assert.Len(t, r.chat.taken(), 3)
	assert.Contains(t, scrape(t, r.m), `untether_webhook_deliveries_total{result="replay",trigger="ci-failed"} 4`)
}

// TestConcurrentReplays: the same delivery sent many times at once runs
// once.
func TestConcurrentReplays(t *testing.T) {
	r := newRig(t, Options{})
	d := ciDelivery(t, "burst")
	codes := make(chan int, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			code, _, _ := r.send(t, d)
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	assert.Equal(t, map[int]int{http.StatusAccepted: 1, http.StatusOK: 15}, count)
	assert.Len(t, r.chat.taken(), 1)
}

type drainErr struct{}

func (drainErr) Error() string             { return "untether is stopping: " + ErrUnavailable.Error() }
func (drainErr) Unwrap() error             { return ErrUnavailable }
func (drainErr) RetryAfter() time.Duration { return 30 * time.Second }

// TestUnavailableThenRetry: a chat that cannot take the run answers 503
// with Retry-After, and the sender's retry of the same delivery runs.
func TestUnavailableThenRetry(t *testing.T) {
	r := newRig(t, Options{})
	r.chat.refuse(drainErr{})
	d := ciDelivery(t, "retry-1")
	code, h, body := r.send(t, d)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "30", h.Get("Retry-After"))
	assert.Contains(t, body, "untether is stopping")

	r.chat.refuse(fmt.Errorf("queue: %w", ErrUnavailable))
	code, h, _ = r.send(t, d)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "60", h.Get("Retry-After"), "the default")

	r.chat.refuse(nil)
	code, _, _ = r.send(t, d)
	assert.Equal(t, http.StatusAccepted, code)
	assert.Len(t, r.chat.taken(), 1)
}

// TestFireFails: an error on untether's side is 500 without details for
// the sender, logged, and the delivery can be sent again.
func TestFireFails(t *testing.T) {
	r := newRig(t, Options{})
	r.chat.refuse(errors.New("state database locked"))
	d := issueDelivery(t, "f-1")
	code, _, body := r.send(t, d)
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.NotContains(t, body, "database")
	assert.Contains(t, r.logText(), "state database locked")

	r.chat.refuse(nil)
	code, _, _ = r.send(t, d)
	assert.Equal(t, http.StatusAccepted, code)
}

// TestPromptCap: a prompt over MaxPrompt is cut, and says so.
func TestPromptCap(t *testing.T) {
	r := newRig(t, Options{MaxPrompt: 120})
	code, _, _ := r.send(t, issueDelivery(t, "cap"))
	require.Equal(t, http.StatusAccepted, code)
	run := r.chat.taken()[0]
	assert.True(t, run.Truncated)
	assert.True(t, strings.HasPrefix(run.Prompt, "New issue #91 in acme-corp/widgets"))
	assert.True(t, strings.HasSuffix(run.Prompt, "\n\n[untether: the rest of this prompt was cut: it was longer than 120 bytes]"), run.Prompt)
}

// TestRefusalsLoggedOncePerMinute: a flood of bad deliveries logs one
// line per trigger per minute, saying how many it left out; names that are
// no trigger share one allowance.
func TestRefusalsLoggedOncePerMinute(t *testing.T) {
	r := newRig(t, Options{})
	bad := ciDelivery(t, "")
	bad.signature = "-"
	for range 5 {
		code, _, _ := r.send(t, bad)
		require.Equal(t, http.StatusUnauthorized, code)
	}
	for i := range 3 {
		d := ciDelivery(t, "")
		d.name = fmt.Sprintf("probe%d", i)
		code, _, _ := r.send(t, d)
		require.Equal(t, http.StatusNotFound, code)
	}
	lines := strings.Count(r.logText(), `"message":"webhook delivery refused"`)
	assert.Equal(t, 2, lines, "one for ci-failed, one for unknown names:\n%s", r.logText())

	r.advance(61 * time.Second)
	code, _, _ := r.send(t, bad)
	require.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, 3, strings.Count(r.logText(), `"message":"webhook delivery refused"`))
	assert.Contains(t, r.logText(), `"trigger":"ci-failed","result":"bad_signature","status":401,"reason":"no X-Hub-Signature-256 header"`)
	assert.Contains(t, r.logText(), `"not_logged_since":4`)
	assert.NotContains(t, r.logText(), "probe1", "an unknown name is not logged as given")
	assert.NotContains(t, r.logText(), ciSecret)
}

// TestSetTriggers: a reload replaces the triggers; a name removed is 404.
func TestSetTriggers(t *testing.T) {
	r := newRig(t, Options{})
	require.NoError(t, r.h.SetTriggers(triggers[1:]))
	code, _, _ := r.send(t, ciDelivery(t, "x"))
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = r.send(t, issueDelivery(t, "y"))
	assert.Equal(t, http.StatusAccepted, code)

	broken := []config.Trigger{{Name: "b", Prompt: "{{"}}
	assert.Error(t, r.h.SetTriggers(broken))
	code, _, _ = r.send(t, issueDelivery(t, "z"))
	assert.Equal(t, http.StatusOK, code, "a failed SetTriggers keeps the triggers it had: y's body again is a replay, not a 404")
}

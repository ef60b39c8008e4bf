package metrics

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/stretchr/testify/assert"
)

// familyTypes is each untether family's type, as client_golang exposed
// them before the move to VictoriaMetrics/metrics; a scraper must see the
// same.
var familyTypes = map[string]string{
	NameTurnsStarted: "counter", NameTurnsFinished: "counter", NameCostUSD: "counter", NameTokens: "counter",
	NameAnswerLatency: "histogram", NameProgressStale: "histogram",
	NameBotAPICalls: "counter", NamePenaltySeconds: "counter", NameChatsInPenalty: "gauge", NameOutboxDepth: "gauge",
	NameUpdateLag: "histogram", NameLastPollSuccess: "gauge", NameStateRefused: "counter",
	NameWebhookDelivered: "counter", NameHTTPRequests: "counter",
	NameLiveCLIs: "gauge", NameWaitingForSlot: "gauge", NameCLISpawns: "counter", NameCLICrashes: "counter",
	NameCLIRestarts: "counter", NameCLIInfo: "gauge", NamePendingApprovals: "gauge", NameApprovalWait: "histogram",
	NameBuildInfo: "gauge",
}

// TestWriteHelpMatchesWholeLines: only a line that is exactly a bare HELP
// line of a known family gets its text.
func TestWriteHelpMatchesWholeLines(t *testing.T) {
	in := "# HELP " + NameLiveCLIs + "\n# HELP go_goroutines\nx{a=\"# HELP " + NameLiveCLIs + "\"} 1\n# HELP " + NameCLIInfo
	var out bytes.Buffer
	writeHelp(&out, []byte(in))
	assert.Equal(t, "# HELP "+NameLiveCLIs+" "+help[NameLiveCLIs]+"\n# HELP go_goroutines\nx{a=\"# HELP "+NameLiveCLIs+"\"} 1\n"+
		"# HELP "+NameCLIInfo+" "+help[NameCLIInfo]+"\n", out.String())
}

// TestLabelEscaping: a label value with a quote, a backslash, a newline
// or invalid UTF-8 (a project's name comes from the configuration) is
// escaped, so the scrape parses and gives the value back.
func TestLabelEscaping(t *testing.T) {
	m := newTest()
	odd := []string{`say "hi"`, `C:\work\`, "two\nlines", `\"`, `end\`}
	for _, p := range odd {
		m.TurnStarted(p)
		m.Cost(p, 0.5, Tokens{Input: 1})
	}
	m.WebhookDelivery(`t"1`, "accepted")
	m.TurnStarted("bad\xffutf8")
	m.TurnStarted("plain")

	f := scrape(t, m.Handler())
	for _, p := range odd {
		assert.Equal(t, 1.0, counterValue(t, f, NameTurnsStarted, map[string]string{"project": p}), "%q", p)
		assert.Equal(t, 0.5, counterValue(t, f, NameCostUSD, map[string]string{"project": p}), "%q", p)
		assert.Equal(t, 1.0, counterValue(t, f, NameTokens, map[string]string{"project": p, "kind": "input"}), "%q", p)
	}
	assert.Equal(t, 1.0, counterValue(t, f, NameWebhookDelivered, map[string]string{"trigger": `t"1`, "result": "accepted"}))
	assert.Equal(t, 1.0, counterValue(t, f, NameTurnsStarted, map[string]string{"project": "bad\uFFFDutf8"}))
	assert.Equal(t, 1.0, counterValue(t, f, NameTurnsStarted, map[string]string{"project": "plain"}), "the rest of the family is intact")
	for c := range 256 { // the library panics on a name it cannot parse: no value may make one
		for _, v := range []string{string(rune(c)), string([]byte{byte(c)}), `\` + string([]byte{byte(c)}) + `"`} {
			assert.NoError(t, vm.ValidateMetric(seriesName("x", []string{"a", "b"}, []string{v, v})), "%q", v)
		}
	}
	assert.Equal(t, `x{a="say \"hi\"",b="C:\\w\n"}`, seriesName("x", []string{"b", "a"}, []string{"C:\\w\n", `say "hi"`}),
		"labels sorted by name, values escaped")
}

// TestScrapeLimits: the content type, and at most two scrapes at once: a
// third, while two wait on a slow probe, is answered 503 at once.
func TestScrapeLimits(t *testing.T) {
	m := newTest()
	h := m.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", rec.Header().Get("Content-Type"))

	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(2)
	m.SetProbes(Probes{LiveCLIs: func() int { entered.Done(); <-release; return 1 }})
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			codes <- rec.Code
		}()
	}
	entered.Wait()
	rec = httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "Limit of concurrent requests reached (2)")
	assert.Less(t, time.Since(start), time.Second, "refused at once")
	close(release)
	assert.Equal(t, http.StatusOK, <-codes)
	assert.Equal(t, http.StatusOK, <-codes)

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code, "the slots are free again")
}

// TestNegativeDurationsCountAsZero: a negative duration (a clock stepped
// back) is counted, as 0, never taken off a histogram's sum.
func TestNegativeDurationsCountAsZero(t *testing.T) {
	m := newTest()
	m.AnswerLatency(-time.Second)
	m.ApprovalWait(-time.Second, DecisionApproved)
	f := scrape(t, m.Handler())
	h := series(f, NameAnswerLatency, nil).GetHistogram()
	assert.Equal(t, uint64(1), h.GetSampleCount())
	assert.Zero(t, h.GetSampleSum())
	assert.Equal(t, uint64(1), bucket(t, h, 0.05))
	assert.Equal(t, uint64(1), series(f, NameApprovalWait, map[string]string{"decision": "approved"}).GetHistogram().GetSampleCount())
}

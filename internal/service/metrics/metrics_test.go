package metrics

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape fetches h's text exposition, as Prometheus does, and parses it.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// series returns the metric of family name whose labels are exactly
// labels, or nil.
func series(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) == len(labels) {
			match := true
			for k, v := range labels {
				match = match && got[k] == v
			}
			if match {
				return m
			}
		}
	}
	return nil
}

func counterValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(fams, name, labels)
	require.NotNil(t, m, "%s%v is not in the scrape", name, labels)
	return m.GetCounter().GetValue()
}

func gaugeValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(fams, name, labels)
	require.NotNil(t, m, "%s%v is not in the scrape", name, labels)
	return m.GetGauge().GetValue()
}

func newTest() *Metrics { return New(Build{Version: "1.2.3", Commit: "abc123"}, zerolog.Nop()) }

func TestEventsReachTheScrape(t *testing.T) {
	m := newTest()
	m.TurnStarted("api")
	m.TurnStarted("api")
	m.TurnStarted("default")
	m.TurnFinished("api", OutcomeAnswered)
	m.TurnFinished("api", OutcomeCrashed)
	m.TurnFinished("default", Outcome("exploded")) // not an outcome: counted as other
	m.Cost("api", 0.25, Tokens{Input: 100, Output: 20, CacheRead: 3000, CacheCreation: 0})
	m.Cost("api", 0.5, Tokens{Input: 1})
	m.Cost("api", math.NaN(), Tokens{})
	m.Cost("api", math.Inf(1), Tokens{})
	m.Cost("api", -1, Tokens{})
	m.AnswerLatency(300 * time.Millisecond)
	m.AnswerLatency(3 * time.Second)
	m.ProgressStaleness(1500 * time.Millisecond)
	m.BotAPICall("sendMessage", 200)
	m.BotAPICall("sendMessage", 429)
	m.BotAPICall("editMessageText", 0)
	m.BotAPICall("../../etc", 200)      // not a method name
	m.BotAPICall("getUpdates", 1000000) // not a status
	m.Penalty(7 * time.Second)
	m.Penalty(-time.Second)
	m.UpdateLag(2 * time.Second)
	m.StateWriteRefused("outbox")
	m.StateWriteRefused("Outbox; DROP")
	m.WebhookDelivery("ci", "accepted")
	m.CLISpawned("api")
	m.CLICrashed("api")
	m.CLIRestarted("api")
	m.SetCLIVersion("2.1.300")
	m.SetCLIVersion("2.1.328") // replaces, never two series
	m.ApprovalWait(40*time.Second, DecisionApproved)
	m.ApprovalWait(15*time.Minute, DecisionExpired)

	f := scrape(t, m.Handler())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{NameTurnsStarted, map[string]string{"project": "api"}, 2},
		{NameTurnsStarted, map[string]string{"project": "default"}, 1},
		{NameTurnsFinished, map[string]string{"project": "api", "outcome": "answered"}, 1},
		{NameTurnsFinished, map[string]string{"project": "api", "outcome": "crashed"}, 1},
		{NameTurnsFinished, map[string]string{"project": "default", "outcome": "other"}, 1},
		{NameCostUSD, map[string]string{"project": "api"}, 0.75},
		{NameTokens, map[string]string{"project": "api", "kind": "input"}, 101},
		{NameTokens, map[string]string{"project": "api", "kind": "output"}, 20},
		{NameTokens, map[string]string{"project": "api", "kind": "cache_read"}, 3000},
		{NameBotAPICalls, map[string]string{"method": "sendMessage", "status": "200"}, 1},
		{NameBotAPICalls, map[string]string{"method": "sendMessage", "status": "429"}, 1},
		{NameBotAPICalls, map[string]string{"method": "editMessageText", "status": "network"}, 1},
		{NameBotAPICalls, map[string]string{"method": "other", "status": "200"}, 1},
		{NameBotAPICalls, map[string]string{"method": "getUpdates", "status": "other"}, 1},
		{NamePenaltySeconds, nil, 7},
		{NameStateRefused, map[string]string{"kind": "outbox"}, 1},
		{NameStateRefused, map[string]string{"kind": "other"}, 1},
		{NameWebhookDelivered, map[string]string{"trigger": "ci", "result": "accepted"}, 1},
		{NameCLISpawns, map[string]string{"project": "api"}, 1},
		{NameCLICrashes, map[string]string{"project": "api"}, 1},
		{NameCLIRestarts, map[string]string{"project": "api"}, 1},
	} {
		assert.InDelta(t, c.want, counterValue(t, f, c.name, c.labels), 1e-9, "%s%v", c.name, c.labels)
	}
	assert.Nil(t, series(f, NameTokens, map[string]string{"project": "api", "kind": "cache_creation"}), "no series for a kind never reported")

	h := series(f, NameAnswerLatency, nil).GetHistogram()
	assert.Equal(t, uint64(2), h.GetSampleCount())
	assert.InDelta(t, 3.3, h.GetSampleSum(), 1e-9)
	assert.Equal(t, uint64(1), bucket(t, h, 0.5), "300 ms falls in le=0.5")
	assert.Equal(t, uint64(2), bucket(t, h, 5))
	assert.Equal(t, uint64(1), series(f, NameProgressStale, nil).GetHistogram().GetSampleCount())
	assert.Equal(t, uint64(1), series(f, NameUpdateLag, nil).GetHistogram().GetSampleCount())
	assert.Equal(t, uint64(1), series(f, NameApprovalWait, map[string]string{"decision": "approved"}).GetHistogram().GetSampleCount())
	assert.InDelta(t, 900, series(f, NameApprovalWait, map[string]string{"decision": "expired"}).GetHistogram().GetSampleSum(), 1e-9)

	require.Len(t, f[NameCLIInfo].GetMetric(), 1)
	assert.Equal(t, 1.0, gaugeValue(t, f, NameCLIInfo, map[string]string{"version": "2.1.328"}))
	b := f[NameBuildInfo].GetMetric()
	require.Len(t, b, 1)
	assert.Contains(t, b[0].String(), `value:"1.2.3"`)
	assert.Contains(t, b[0].String(), `value:"abc123"`)

	assert.Contains(t, f, "go_goroutines", "Go's collector is registered")
	assert.Contains(t, f, "process_resident_memory_bytes", "the process collector is registered")
}

func bucket(t *testing.T, h *dto.Histogram, le float64) uint64 {
	t.Helper()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	t.Fatalf("no bucket le=%v", le)
	return 0
}

// TestNoChatOrUserLabel: no metric carries a label that could name a
// person or a chat.
func TestNoChatOrUserLabel(t *testing.T) {
	m := newTest()
	exerciseAll(m)
	for name, f := range scrape(t, m.Handler()) {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				n := strings.ToLower(l.GetName())
				assert.False(t, strings.Contains(n, "chat") || strings.Contains(n, "user") || strings.Contains(n, "thread"),
					"%s has label %s", name, l.GetName())
			}
		}
	}
}

func TestProbes(t *testing.T) {
	m := newTest()
	f := scrape(t, m.Handler())
	assert.NotContains(t, f, NameLiveCLIs, "no series before the probes are set")

	polled := time.Date(2026, 5, 1, 12, 0, 0, 500_000_000, time.UTC)
	m.SetProbes(Probes{
		LiveCLIs:         func() int { return 3 },
		WaitingForSlot:   func() int { return 1 },
		PendingApprovals: func() int { return 2 },
		OutboxDepth:      func() (int, int) { return 4, 9 },
		ChatsInPenalty:   func() int { return 0 },
		LastPollSuccess:  func() time.Time { return polled },
	})
	f = scrape(t, m.Handler())
	assert.Equal(t, 3.0, gaugeValue(t, f, NameLiveCLIs, nil))
	assert.Equal(t, 1.0, gaugeValue(t, f, NameWaitingForSlot, nil))
	assert.Equal(t, 2.0, gaugeValue(t, f, NamePendingApprovals, nil))
	assert.Equal(t, 4.0, gaugeValue(t, f, NameOutboxDepth, map[string]string{"priority": "high"}))
	assert.Equal(t, 9.0, gaugeValue(t, f, NameOutboxDepth, map[string]string{"priority": "low"}))
	assert.Equal(t, 0.0, gaugeValue(t, f, NameChatsInPenalty, nil))
	assert.InDelta(t, float64(polled.Unix())+0.5, gaugeValue(t, f, NameLastPollSuccess, nil), 1e-3)

	// A probe that panics loses its own metric, not the scrape nor the
	// daemon; one left nil is left out; a zero poll time is no series.
	m.SetProbes(Probes{
		LiveCLIs:         func() int { panic("broken probe") },
		PendingApprovals: func() int { return 5 },
		LastPollSuccess:  func() time.Time { return time.Time{} },
	})
	f = scrape(t, m.Handler())
	assert.NotContains(t, f, NameLiveCLIs)
	assert.NotContains(t, f, NameWaitingForSlot)
	assert.NotContains(t, f, NameLastPollSuccess)
	assert.Equal(t, 5.0, gaugeValue(t, f, NamePendingApprovals, nil))
}

// TestNilMetrics: a nil *Metrics records nothing and does not panic.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	exerciseAll(m)
	m.SetProbes(Probes{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	rec := httptest.NewRecorder()
	m.InstrumentHTTP("x", h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusTeapot, rec.Code)
}

func TestInstrumentHTTP(t *testing.T) {
	m := newTest()
	h := m.InstrumentHTTP("hooks", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))
	for _, p := range []string{"/ok", "/bad", "/bad"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, p, nil))
	}
	f := scrape(t, m.Handler())
	assert.Equal(t, 1.0, counterValue(t, f, NameHTTPRequests, map[string]string{"handler": "hooks", "code": "200"}))
	assert.Equal(t, 2.0, counterValue(t, f, NameHTTPRequests, map[string]string{"handler": "hooks", "code": "401"}))

	m.HTTPBusy()
	f = scrape(t, m.Handler())
	assert.Equal(t, 1.0, counterValue(t, f, NameHTTPRequests, map[string]string{"handler": "busy", "code": "503"}))
}

// exerciseAll calls every event once and sets every probe, so every
// family has a series.
func exerciseAll(m *Metrics) {
	m.SetProbes(Probes{LiveCLIs: func() int { return 0 }, WaitingForSlot: func() int { return 0 },
		PendingApprovals: func() int { return 0 }, OutboxDepth: func() (int, int) { return 0, 0 },
		ChatsInPenalty: func() int { return 0 }, LastPollSuccess: time.Now})
	m.TurnStarted("p")
	m.TurnFinished("p", OutcomeAnswered)
	m.Cost("p", 1, Tokens{1, 1, 1, 1})
	m.AnswerLatency(time.Second)
	m.ProgressStaleness(time.Second)
	m.BotAPICall("sendMessage", 200)
	m.Penalty(time.Second)
	m.UpdateLag(time.Second)
	m.StateWriteRefused("chat")
	m.WebhookDelivery("t", "accepted")
	m.CLISpawned("p")
	m.CLICrashed("p")
	m.CLIRestarted("p")
	m.SetCLIVersion("2.1.328")
	m.ApprovalWait(time.Second, DecisionDenied)
	m.HTTPBusy()
	m.InstrumentHTTP("metrics", http.NotFoundHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

// definedNames lists every untether_* family the package can expose.
func definedNames(t *testing.T) []string {
	t.Helper()
	m := newTest()
	exerciseAll(m)
	var names []string
	for name := range scrape(t, m.Handler()) {
		if strings.HasPrefix(name, "untether_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// TestTextFormatIsValid: the raw exposition passes the parser's checks
// and every untether metric has its HELP line.
func TestTextFormatIsValid(t *testing.T) {
	m := newTest()
	exerciseAll(m)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.Bytes()
	p := expfmt.NewTextParser(model.LegacyValidation)
	_, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	for _, n := range definedNames(t) {
		assert.True(t, bytes.Contains(body, []byte("# HELP "+n+" ")), "%s has no HELP line", n)
	}
}

package metrics

import (
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// Build names the running binary for untether_build_info.
type Build struct {
	Version, Commit string
}

// Metrics owns a registry and the metrics in it. Its methods are safe for
// concurrent use, and do nothing on a nil *Metrics.
type Metrics struct {
	reg *prometheus.Registry
	log zerolog.Logger

	turnsStarted      *prometheus.CounterVec
	turnsFinished     *prometheus.CounterVec
	costUSD           *prometheus.CounterVec
	tokens            *prometheus.CounterVec
	answerLatency     prometheus.Histogram
	progressStaleness prometheus.Histogram

	botAPICalls *prometheus.CounterVec
	penalty     prometheus.Counter
	updateLag   prometheus.Histogram
	stateRefuse *prometheus.CounterVec
	webhooks    *prometheus.CounterVec
	httpReqs    *prometheus.CounterVec

	cliSpawns    *prometheus.CounterVec
	cliCrashes   *prometheus.CounterVec
	cliRestarts  *prometheus.CounterVec
	cliInfo      *prometheus.GaugeVec
	approvalWait *prometheus.HistogramVec

	probes atomic.Pointer[Probes] // probes.go
}

// Histogram buckets, in seconds, for what each one measures.
var (
	// From the CLI's result to the answer's sendMessage: the outbox's
	// queue and Telegram's pace, so mostly well under a second, more
	// behind a 429.
	answerBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}
	// How long a progress message shows the same thing before an edit
	// replaces it: the edit interval (1 s, 3 s in groups) and any wait
	// behind answers or a 429.
	staleBuckets = []float64{0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120}
	// A person's answer to an approval: seconds to the timeout (15 min
	// by default), or longer where the operator set one.
	approvalBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}
	// From a message's date (Telegram's clock, whole seconds) to the
	// getUpdates response that brought it.
	lagBuckets = []float64{0.5, 1, 2, 5, 10, 30, 60, 300}
)

// New returns metrics with every untether metric registered, and Go's and
// the process's own (go_*, process_*). log hears about probes that panic.
func New(b Build, log zerolog.Logger) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
		m.reg.MustRegister(h)
		return h
	}

	m.turnsStarted = counter(NameTurnsStarted, "Turns started (a prompt given to a CLI), by project.", "project")
	m.turnsFinished = counter(NameTurnsFinished, "Turns ended, by project and outcome.", "project", "outcome")
	m.costUSD = counter(NameCostUSD, "Cost in US dollars as the CLI reports it (total_cost_usd), by project.", "project")
	m.tokens = counter(NameTokens, "Tokens the CLI reports, by project and kind (input, output, cache_read, cache_creation).", "project", "kind")
	m.answerLatency = histogram(NameAnswerLatency,
		"Time from the bridge taking the CLI's result to the sendMessage call that delivered the answer (its first part).", answerBuckets)
	m.progressStaleness = histogram(NameProgressStale,
		"Time a progress message showed what it showed before an edit Telegram accepted replaced it.", staleBuckets)

	m.botAPICalls = counter(NameBotAPICalls, "Bot API calls by method and HTTP status (\"network\": no answer).", "method", "status")
	m.penalty = prometheus.NewCounter(prometheus.CounterOpts{Name: NamePenaltySeconds,
		Help: "Seconds of retry_after that 429 answers imposed, summed over chats."})
	m.reg.MustRegister(m.penalty)
	m.updateLag = histogram(NameUpdateLag, "Time from an update's date to the getUpdates response that brought it.", lagBuckets)
	m.stateRefuse = counter(NameStateRefused, "State writes the storage refused (full disk, read-only), by kind; they are kept in memory and retried.", "kind")
	m.webhooks = counter(NameWebhookDelivered, "Webhook deliveries by trigger and result.", "trigger", "result")
	m.httpReqs = counter(NameHTTPRequests, "Requests to the HTTP listener by handler and status code.", "handler", "code")

	m.cliSpawns = counter(NameCLISpawns, "Claude CLI processes started, by project.", "project")
	m.cliCrashes = counter(NameCLICrashes, "Claude CLI processes that died unasked, by project.", "project")
	m.cliRestarts = counter(NameCLIRestarts, "Claude CLI processes started again after a crash, by project.", "project")
	m.cliInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameCLIInfo, Help: "The Claude CLI's version (value 1)."}, []string{"version"})
	m.reg.MustRegister(m.cliInfo)
	m.approvalWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameApprovalWait,
		Help: "Time an approval waited for its decision, by decision.", Buckets: approvalBuckets}, []string{"decision"})
	m.reg.MustRegister(m.approvalWait)

	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameBuildInfo, Help: "The untether binary (value 1)."},
		[]string{"version", "commit", "go_version"})
	build.WithLabelValues(versionLabel(b.Version), versionLabel(b.Commit), runtime.Version()).Set(1)
	m.reg.MustRegister(build)

	m.reg.MustRegister(probeCollector{m}, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// scrapeTimeout bounds one scrape: a probe stuck behind a lock must not
// hold the listener's slots.
const scrapeTimeout = 10 * time.Second

// Handler serves the registry in Prometheus' text format (or what the
// scraper negotiates), at most two scrapes at once.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError, // one broken collector does not hide the rest
		Registry:            m.reg,                    // promhttp_metric_handler_errors_total
		MaxRequestsInFlight: 2,
		Timeout:             scrapeTimeout,
	})
}

// HTTPBusy counts a request the listener refused because every handler
// slot was taken, as handler "busy", code 503 in
// untether_http_requests_total.
func (m *Metrics) HTTPBusy() {
	if m == nil {
		return
	}
	m.httpReqs.WithLabelValues("busy", "503").Inc()
}

// InstrumentHTTP counts h's answers in untether_http_requests_total under
// the handler label name.
func (m *Metrics) InstrumentHTTP(name string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return promhttp.InstrumentHandlerCounter(m.httpReqs.MustCurryWith(prometheus.Labels{"handler": name}), h)
}

package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"
)

// Build names the running binary for untether_build_info.
type Build struct {
	Version, Commit string
}

// Metrics owns a set of metrics. Its methods are safe for concurrent use,
// and do nothing on a nil *Metrics.
type Metrics struct {
	set *vm.Set
	log zerolog.Logger

	turnsStarted      *family[vm.Counter]
	turnsFinished     *family[vm.Counter]
	costUSD           *family[vm.FloatCounter]
	tokens            *family[vm.Counter]
	answerLatency     *vm.PrometheusHistogram
	progressStaleness *vm.PrometheusHistogram

	botAPICalls *family[vm.Counter]
	penalty     *vm.FloatCounter
	updateLag   *vm.PrometheusHistogram
	stateRefuse *family[vm.Counter]
	webhooks    *family[vm.Counter]
	httpReqs    *family[vm.Counter]

	cliSpawns    *family[vm.Counter]
	cliCrashes   *family[vm.Counter]
	cliRestarts  *family[vm.Counter]
	approvalWait *family[vm.PrometheusHistogram]

	// cliInfoMu guards cliInfo, the name of untether_claude_cli_info's
	// one series ("" before the version is known).
	cliInfoMu sync.Mutex
	cliInfo   string

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

// New returns metrics with every untether metric made; the handler adds
// Go's and the process's own (go_*, process_*) at each scrape. log hears
// about probes that panic.
func New(b Build, log zerolog.Logger) *Metrics {
	// The library writes each family's TYPE line (and a bare HELP line,
	// which the handler fills in) only with this switch on. It is global
	// to the library; nothing else in the daemon uses the library.
	vm.ExposeMetadata(true)

	s := vm.NewSet() // never the library's default set: tests and a second instance do not collide
	m := &Metrics{set: s, log: log}
	counter := func(name string, labels ...string) *family[vm.Counter] {
		return newFamily(s, (*vm.Set).NewCounter, name, labels...)
	}

	m.turnsStarted = counter(NameTurnsStarted, "project")
	m.turnsFinished = counter(NameTurnsFinished, "project", "outcome")
	m.costUSD = newFamily(s, (*vm.Set).NewFloatCounter, NameCostUSD, "project")
	m.tokens = counter(NameTokens, "project", "kind")
	m.answerLatency = s.NewPrometheusHistogramExt(NameAnswerLatency, answerBuckets)
	m.progressStaleness = s.NewPrometheusHistogramExt(NameProgressStale, staleBuckets)

	m.botAPICalls = counter(NameBotAPICalls, "method", "status")
	m.penalty = s.NewFloatCounter(NamePenaltySeconds)
	m.updateLag = s.NewPrometheusHistogramExt(NameUpdateLag, lagBuckets)
	m.stateRefuse = counter(NameStateRefused, "kind")
	m.webhooks = counter(NameWebhookDelivered, "trigger", "result")
	m.httpReqs = counter(NameHTTPRequests, "handler", "code")

	m.cliSpawns = counter(NameCLISpawns, "project")
	m.cliCrashes = counter(NameCLICrashes, "project")
	m.cliRestarts = counter(NameCLIRestarts, "project")
	m.approvalWait = newFamily(s, func(s *vm.Set, series string) *vm.PrometheusHistogram {
		return s.NewPrometheusHistogramExt(series, approvalBuckets)
	}, NameApprovalWait, "decision")

	s.NewGauge(seriesName(NameBuildInfo, []string{"version", "commit", "go_version"},
		[]string{versionLabel(b.Version), versionLabel(b.Commit), runtime.Version()}), nil).Set(1)
	return m
}

// Package metrics is what untether tells Prometheus: one Metrics value owns
// its own set of metrics (never the library's default set, so tests and a
// second instance do not collide) and offers a typed method per event,
// which the parts of the daemon call as things happen (TurnStarted,
// TurnFinished, Cost, AnswerLatency, BotAPICall, …), and Probes, functions
// read at each scrape for what is a level rather than an event (live CLIs,
// the outbox's queues). Handler serves them, with Go's and the process's
// own (go_*, process_*), in Prometheus' text format.
//
// The metrics are kept by github.com/VictoriaMetrics/metrics, not
// Prometheus' client_golang: the daemon's peak RSS is a target, and
// client_golang with what it pulls in (protobuf, client_model, common,
// procfs) added about 4.3 MB of binary and 3.2 MB of RSS to a small
// net/http program, VictoriaMetrics/metrics about 0.7 MB and 0.8 MB. That
// library keeps no help text and names a series by its text
// (name{label="value"}), so this package keeps the help in names.go and
// fills it in on the way out (handler.go), and escapes label values
// itself (family.go). The untether_* families are what client_golang
// served: the same names, types, labels, buckets and help. Go's and the
// process's own are the library's set: the dashboard's go_goroutines,
// process_cpu_seconds_total and process_resident_memory_bytes are there,
// but a few of client_golang's are not (go_gc_gogc_percent,
// process_network_*_bytes_total, …) and their HELP lines are bare.
//
// Labels are chosen so that a series count stays small and nothing about a
// person leaks: a project, an outcome, a Bot API method and status, a
// token kind, a trigger's name, never a chat id or a user. Every label
// value that does not come from the configuration is checked against a
// fixed set or shape, and replaced by "other" when it does not fit, so a
// hostile server or a bug cannot grow the series without bound.
//
// Every metric name is a constant in names.go; deploy/grafana/untether.json
// draws exactly these, and a test keeps the two in step.
//
// A nil *Metrics is valid and records nothing, so a part of the daemon can
// hold one unconditionally.
package metrics

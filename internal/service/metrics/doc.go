// Package metrics is what untether tells Prometheus: one Metrics value owns
// its own registry (never the global one, so tests and a second instance
// do not collide) and offers a typed method per event, which the parts of
// the daemon call as things happen (TurnStarted, TurnFinished, Cost,
// AnswerLatency, BotAPICall, …), and Probes, functions read at each
// scrape for what is a level rather than an event (live CLIs, the outbox's
// queues). Handler serves the registry in Prometheus' text format.
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

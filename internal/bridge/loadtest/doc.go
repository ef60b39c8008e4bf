// Package loadtest measures the daemon under load: the real bridge against
// the in-repo fake Telegram (with its flood limits enforced) and either a
// fake CLI that streams tool events at full speed or the real pinned CLI
// against the fake Anthropic API.
//
// Everything is a `go test -bench` benchmark reporting custom metrics; the
// numbers go to BENCHMARKS.md, never into assertions. BenchmarkLoad splits
// an answer's latency into the bridge's part and the outbox's through
// outbox.Options.Dispatched; BenchmarkOutage makes the fake Telegram answer
// every call with 502 for 10 s, 60 s or (on a jumped outbox clock) 10 min;
// BenchmarkLongAnswer times a 12.6 kB answer's four chunks; BenchmarkLoadStrict
// and LongAnswer's -strict scenarios run against the fake's strict flood
// model (telegramtest.StrictFloodLimits), where 429s must cost nothing;
// BenchmarkStreamEnd splits a streamed answer's last half second into the
// fake API's closing events, the CLI's frames (a tee around the real CLI),
// the bridge, the outbox and the HTTP call. BenchmarkDaemonStart and
// BenchmarkDaemonPeakRSS run the daemon binary itself (built as `make build`
// builds it, or another build named by [EnvDaemonBin]): exec to the first
// getUpdates, and VmHWM over a start and three real-CLI turns. The fake CLI is the
// package's test binary re-executed with [EnvFakeCLI] set (see [FakeCLIMain]),
// so it needs no separate build step.
//
// Typical run (a few minutes; each sub-benchmark is one round of turns):
//
//	go test ./internal/bridge/loadtest -run '^$' -bench 'Load|Memory|CPU' -benchtime 1x -timeout 30m
//	go test ./internal/bridge/loadtest -run '^$' -bench 'Peer|Spawn' -benchtime 1x -timeout 30m
//	go test ./internal/bridge/loadtest -run '^$' -bench 'Outage|LongAnswer' -benchtime 3x -timeout 40m
//
// BENCHMARKS.md lists every benchmark with its command and latest figures.
package loadtest

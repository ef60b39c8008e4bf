package loadtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// startRun is one start of the daemon binary: from exec to the first
// getUpdates the fake Telegram received, and the process's memory when
// the run was measured.
type startRun struct {
	toPoll           time.Duration
	peak, anon, file int64 // VmHWM, RssAnon, RssFile
}

// realCLIConfig is a daemon config for tg whose claude is the real CLI of
// env (its start-up `claude --version` probe is then the real one).
func realCLIConfig(tb testing.TB, tg *telegramtest.Server, env *claudetest.Env, stateDir string) string {
	tb.Helper()
	vars := make([]string, 0, len(env.Vars))
	for k, v := range env.Vars {
		if k == "HOME" {
			continue // claude.home
		}
		vars = append(vars, fmt.Sprintf("%s = %q", k, v))
	}
	slices.Sort(vars)
	claude := fmt.Sprintf("binary = %q\nworkdir = %q\nhome = %q\nenv = { %s }",
		env.Binary, env.Workdir, env.Home, strings.Join(vars, ", "))
	return daemonConfigFile(tb, tg, claude, stateDir)
}

// runDaemonOnce starts bin with config, waits for its first getUpdates,
// lets measure see the running process, reads its memory, then stops it
// with SIGTERM and waits for it to exit.
func runDaemonOnce(tb testing.TB, bin, config string, env *claudetest.Env, tg *telegramtest.Server, measure func(pid int)) startRun {
	tb.Helper()
	logPath := filepath.Join(tb.TempDir(), "daemon.log")
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "--config", config)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = env.Environ()
	before := len(tg.Calls())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the daemon: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-done: // exited before polling: stop waiting
			cancel()
		case <-ctx.Done():
		}
	}()
	var polled time.Time
	_, err = tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
		for _, c := range sn.Calls[min(before, len(sn.Calls)):] {
			if c.Method == "getUpdates" {
				polled = c.Time
				return true
			}
		}
		return false
	})
	if err != nil {
		stop()
		data, _ := os.ReadFile(logPath)
		tb.Fatalf("daemon not polling: %v\n%s", err, data)
	}
	r := startRun{toPoll: polled.Sub(start)}
	if measure != nil {
		measure(cmd.Process.Pid)
	}
	pid := cmd.Process.Pid
	r.peak, _ = ProcPeakRSS(pid)
	r.anon, _ = procStatusBytes(pid, "RssAnon:")
	r.file, _ = procStatusBytes(pid, "RssFile:")
	stop()
	return r
}

// mb is n bytes in MiB, for b.ReportMetric.
func mb(n int64) float64 { return float64(n) / (1 << 20) }

// medianBytes is the median of the field of runs that pick selects.
func medianBytes(runs []startRun, pick func(startRun) int64) int64 {
	xs := make([]time.Duration, len(runs)) // Percentile sorts durations; bytes sort the same
	for i, r := range runs {
		xs[i] = time.Duration(pick(r))
	}
	return int64(median(xs))
}

func reportStarts(b *testing.B, runs []startRun) {
	polls := make([]time.Duration, len(runs))
	for i, r := range runs {
		polls[i] = r.toPoll
	}
	slices.Sort(polls)
	b.ReportMetric(Ms(polls[0]), "start-to-poll-min-ms")
	b.ReportMetric(Ms(median(polls)), "start-to-poll-p50-ms")
	b.ReportMetric(Ms(polls[len(polls)-1]), "start-to-poll-max-ms")
	b.ReportMetric(mb(medianBytes(runs, func(r startRun) int64 { return r.peak })), "peak-rss-p50-MB")
	b.ReportMetric(mb(medianBytes(runs, func(r startRun) int64 { return r.anon })), "rss-anon-p50-MB")
	b.ReportMetric(mb(medianBytes(runs, func(r startRun) int64 { return r.file })), "rss-file-p50-MB")
}

// BenchmarkDaemonStart times the real daemon binary (built once from
// ./cmd/untether as `make build` builds it, or $UNTETHER_BENCH_DAEMON_BIN)
// from exec to the first getUpdates the fake Telegram receives, b.N
// starts, with the real CLI configured (so its `claude --version` probe is
// the real one; no turn runs). fresh starts on an empty state directory
// (the schema is created); restart on the one a previous run left. It
// reports the min, median and max of the b.N starts (the machine is
// shared: the min is the least disturbed), and the idle daemon's peak RSS
// (VmHWM) and its anonymous and file-backed parts a second after its first
// poll.
func BenchmarkDaemonStart(b *testing.B) {
	bin := buildDaemon(b)
	env := claudetest.New(b, fakeapi.Script{})
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	settle := func(int) { time.Sleep(time.Second) }
	b.Run("fresh", func(b *testing.B) {
		runs := make([]startRun, b.N)
		for i := range runs {
			cfg := realCLIConfig(b, tg, env, filepath.Join(b.TempDir(), "state"))
			runs[i] = runDaemonOnce(b, bin, cfg, env, tg, settle)
		}
		reportStarts(b, runs)
	})
	b.Run("restart", func(b *testing.B) {
		cfg := realCLIConfig(b, tg, env, filepath.Join(b.TempDir(), "state"))
		runDaemonOnce(b, bin, cfg, env, tg, nil)
		runs := make([]startRun, b.N)
		for i := range runs {
			runs[i] = runDaemonOnce(b, bin, cfg, env, tg, settle)
		}
		reportStarts(b, runs)
	})
}

// BenchmarkDaemonPeakRSS reads the real daemon binary's peak RSS (VmHWM)
// over a start and three turns in one private chat with the real CLI
// against the fake Anthropic API (a cold turn, then two warm ones), b.N
// runs on fresh state: the figure issue 25 compares with cc-connect's. The
// CLI is a process of its own, so its memory is not counted. Also the
// idle peak (a second after the first poll), and the anonymous and
// file-backed RSS after the turns.
func BenchmarkDaemonPeakRSS(b *testing.B) {
	bin := buildDaemon(b)
	env := claudetest.New(b, fakeapi.Script{})
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	chat, user := telegramtest.ChatID(alice), telegramtest.User{ID: alice, FirstName: "Alice"}
	tg.AddChat(telegramtest.Chat{ID: chat, Type: telegramtest.Private, FirstName: "Alice"})
	idle := make([]startRun, 0, b.N)
	runs := make([]startRun, b.N)
	for i := range runs {
		cfg := realCLIConfig(b, tg, env, filepath.Join(b.TempDir(), "state"))
		runs[i] = runDaemonOnce(b, bin, cfg, env, tg, func(pid int) {
			time.Sleep(time.Second)
			hwm, _ := ProcPeakRSS(pid)
			idle = append(idle, startRun{peak: hwm})
			for t := range 3 {
				word := fmt.Sprintf("PEAK%dT%d", i, t)
				since := time.Now()
				if _, err := tg.TryUserSends(chat, user, "say "+word); err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
					for _, c := range sn.Calls {
						if c.Method == "sendMessage" && c.OK() && !c.Time.Before(since) && strings.Contains(c.Params["text"], word) {
							return true
						}
					}
					return false
				})
				cancel()
				if err != nil {
					b.Fatalf("turn %d of run %d: no answer: %v", t, i, err)
				}
			}
			quiet(tg, time.Second, time.Minute)
		})
	}
	reportStarts(b, runs)
	b.ReportMetric(mb(medianBytes(idle, func(r startRun) int64 { return r.peak })), "idle-peak-rss-p50-MB")
}

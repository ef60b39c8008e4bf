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
// getUpdates the fake Telegram received, and the process's peak RSS.
type startRun struct {
	toPoll  time.Duration
	peakRSS int64 // VmHWM when the run was measured
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
	cfg := fmt.Sprintf(`[telegram]
bot_token = %q
api_url = %q
allow_any_user = true

[claude]
binary = %q
workdir = %q
home = %q
env = { %s }

[state]
dir = %q

[log]
level = "info"
format = "json"
`, tg.Token(), tg.URL(), env.Binary, env.Workdir, env.Home, strings.Join(vars, ", "), stateDir)
	path := filepath.Join(tb.TempDir(), "untether.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// runDaemonOnce starts bin with config, waits for its first getUpdates,
// lets measure see the running process, then stops it with SIGTERM and
// waits for it to exit.
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
	r.peakRSS, _ = ProcPeakRSS(cmd.Process.Pid)
	stop()
	return r
}

func reportStarts(b *testing.B, runs []startRun) {
	polls := make([]time.Duration, len(runs))
	peaks := make([]time.Duration, len(runs)) // bytes, sorted with the same helper
	for i, r := range runs {
		polls[i], peaks[i] = r.toPoll, time.Duration(r.peakRSS)
	}
	slices.Sort(polls)
	b.ReportMetric(Ms(polls[0]), "start-to-poll-min-ms")
	b.ReportMetric(Ms(median(polls)), "start-to-poll-p50-ms")
	b.ReportMetric(Ms(polls[len(polls)-1]), "start-to-poll-max-ms")
	b.ReportMetric(float64(median(peaks))/(1<<20), "peak-rss-p50-MB")
}

// BenchmarkDaemonStart times the real daemon binary (built once from
// ./cmd/untether) from exec to the first getUpdates the fake Telegram
// receives, b.N starts, with the real CLI configured (so its `claude
// --version` probe is the real one; no turn runs). fresh starts on an
// empty state directory (the schema is created); restart on the one a
// previous run left. It reports the min, median and max of the b.N starts
// (the machine is shared: the min is the least disturbed) and the peak RSS
// (VmHWM) of the idle daemon a second after its first poll.
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
// against the fake Anthropic API (a cold turn, then two warm ones): the
// figure the issue compares with cc-connect's. The CLI is a process of
// its own, so its memory is not counted.
func BenchmarkDaemonPeakRSS(b *testing.B) {
	bin := buildDaemon(b)
	env := claudetest.New(b, fakeapi.Script{})
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	chat, user := telegramtest.ChatID(alice), telegramtest.User{ID: alice, FirstName: "Alice"}
	tg.AddChat(telegramtest.Chat{ID: chat, Type: telegramtest.Private, FirstName: "Alice"})
	idle := make([]time.Duration, 0, b.N)
	runs := make([]startRun, b.N)
	for i := range runs {
		cfg := realCLIConfig(b, tg, env, filepath.Join(b.TempDir(), "state"))
		runs[i] = runDaemonOnce(b, bin, cfg, env, tg, func(pid int) {
			time.Sleep(time.Second)
			hwm, _ := ProcPeakRSS(pid)
			idle = append(idle, time.Duration(hwm))
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
	slices.Sort(idle)
	reportStarts(b, runs)
	b.ReportMetric(float64(median(idle))/(1<<20), "idle-peak-rss-p50-MB")
}

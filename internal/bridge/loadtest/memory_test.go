package loadtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
)

const memChats = 200

// heapOwners splits the live heap by who allocated it, from the exact
// allocation profile (MemProfileRate = 1): the fake Telegram (its handlers
// and the HTTP server goroutines serving it), this harness, and everything
// else, which is the daemon (bridge, outbox, runner, store, the Telegram
// client and its transport).
type heapOwners struct{ daemon, fake, harness int64 }

const (
	modPrefix     = "github.com/untether/untether/"
	fakePkg       = modPrefix + "internal/bridge/telegramtest."
	harnessPkg    = modPrefix + "internal/bridge/loadtest."
	serverMarker1 = "net/http.(*conn).serve"
	serverMarker2 = "net/http/httptest."
)

func ownerOf(stack []uintptr) int {
	frames := runtime.CallersFrames(stack)
	owner := -1
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, serverMarker1), strings.HasPrefix(f.Function, serverMarker2):
			return 1
		case owner < 0 && strings.HasPrefix(f.Function, fakePkg):
			owner = 1
		case owner < 0 && strings.HasPrefix(f.Function, harnessPkg):
			owner = 2
		case owner < 0 && strings.HasPrefix(f.Function, modPrefix):
			owner = 0
		}
		if !more {
			break
		}
	}
	return max(owner, 0)
}

// measureHeap collects garbage until the profile is current, then sums the
// profile's in-use bytes by owner.
func measureHeap() heapOwners {
	for range 3 {
		runtime.GC()
	}
	var recs []runtime.MemProfileRecord
	for {
		n, _ := runtime.MemProfile(nil, false)
		recs = make([]runtime.MemProfileRecord, n+256)
		n, ok := runtime.MemProfile(recs, false)
		if ok {
			recs = recs[:n]
			break
		}
	}
	var h heapOwners
	for _, r := range recs {
		switch ownerOf(r.Stack()) {
		case 0:
			h.daemon += r.InUseBytes()
		case 1:
			h.fake += r.InUseBytes()
		default:
			h.harness += r.InUseBytes()
		}
	}
	return h
}

// BenchmarkMemory measures, in process, the daemon's live heap at idle and
// per chat actor: 200 private chats each finish one 200-tool turn, their
// CLIs are closed by a 2 s idle_timeout (the CLIs are separate processes
// anyway), then the heap is compared with the idle one. The allocation
// profile attributes every live byte, so the fake Telegram's own state is
// left out.
func BenchmarkMemory(b *testing.B) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for i := 0; i < b.N; i++ {
		tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
		tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
		convs := setupConvs(tg, loadScenario{chats: memChats})
		d := startDaemon(b, tg, daemonOpts{fakeEnv: map[string]string{EnvTools: strconv.Itoa(loadTools)},
			mutate: func(c *config.Config) { c.Claude.IdleTimeout = config.Duration(2 * time.Second) }})
		quiet(tg, 2*time.Second, time.Minute)
		idle := measureHeap()
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		rss0, _ := ProcRSS(os.Getpid())

		lost := 0
		for _, r := range round(b, d, convs, i) {
			if r.lost {
				lost++ // reported, not fatal: a measurement, not a test
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for d.pool.Live() > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		quiet(tg, 3*time.Second, 2*time.Minute)
		after := measureHeap()
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		rss1, _ := ProcRSS(os.Getpid())
		live := d.pool.Live()
		d.stop()

		perChat := float64(after.daemon-idle.daemon) / memChats
		b.ReportMetric(float64(idle.daemon)/1024, "idle-daemon-heap-KB")
		b.ReportMetric(perChat/1024, "daemon-heap-KB/chat")
		b.ReportMetric(float64(after.fake-idle.fake)/memChats/1024, "faketg-heap-KB/chat")
		b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/memChats/1024, "process-heap-KB/chat")
		b.ReportMetric(float64(rss0)/(1<<20), "process-rss-idle-MB")
		b.ReportMetric(float64(rss1-rss0)/memChats/1024, "process-rss-KB/chat")
		b.ReportMetric(float64(live), "cli-still-live")
		b.ReportMetric(float64(lost), "lost-answers")
		b.Logf("daemon heap idle %d KB, after %d chats %d KB (%.1f KB/chat); fake Telegram +%d KB; harness %d KB; process HeapAlloc %d → %d KB; RSS %d → %d MB; %d CLIs still live",
			idle.daemon>>10, memChats, after.daemon>>10, perChat/1024, (after.fake-idle.fake)>>10, after.harness>>10,
			ms0.HeapAlloc>>10, ms1.HeapAlloc>>10, rss0>>20, rss1>>20, live)
	}
}

// BenchmarkCPUPerFrame measures the process's CPU time (getrusage, children
// excluded, so the fake CLI does not count) for one chat whose turn streams
// 10,000 tool pairs (20,006 frames) at full speed, through decode,
// translate, render state, progress edits and the final answer.
func BenchmarkCPUPerFrame(b *testing.B) {
	const tools = 10000
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
	convs := setupConvs(tg, loadScenario{chats: 1})
	d := startDaemon(b, tg, daemonOpts{})
	// Warm the chat's CLI so the measured turns pay no spawn.
	warm, err := tg.TryUserSends(convs[0].chat, convs[0].user, "LOAD warm tools=1")
	if err != nil {
		b.Fatal(err)
	}
	_ = warm
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.watch.wait(ctx, "warm"); err != nil {
		b.Fatalf("warm-up turn: %v", err)
	}
	quiet(tg, 2*time.Second, time.Minute)
	cpu0, _ := CPUTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tag := fmt.Sprintf("cpu%d", i)
		if _, err := tg.TryUserSends(convs[0].chat, convs[0].user, fmt.Sprintf("LOAD %s tools=%d", tag, tools)); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := d.watch.wait(ctx, tag)
		cancel()
		if err != nil {
			b.Fatalf("turn %d: %v", i, err)
		}
	}
	b.StopTimer()
	cpu1, _ := CPUTime()
	frames := b.N * FramesPerTurn(tools)
	b.ReportMetric((cpu1-cpu0).Seconds()/float64(frames)*1000, "cpu-s/1kframes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "wall-ns/frame")
}

// extDaemon is the real cmd/untether binary run as a child process.
type extDaemon struct {
	cmd *exec.Cmd
	pid int
	log string
}

// EnvDaemonBin, when set, names a daemon binary the process benchmarks run
// instead of building ./cmd/untether: an older commit's, for a before and
// after from one benchmark file.
const EnvDaemonBin = "UNTETHER_BENCH_DAEMON_BIN"

// buildDaemon builds ./cmd/untether as `make build` does (CGO_ENABLED=0),
// or returns $UNTETHER_BENCH_DAEMON_BIN.
func buildDaemon(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv(EnvDaemonBin); bin != "" {
		return bin
	}
	wd, _ := os.Getwd()
	root, err := claudetest.ModuleRoot(wd)
	if err != nil {
		tb.Fatalf("module root: %v", err)
	}
	bin := filepath.Join(tb.TempDir(), "untether")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/untether")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build the daemon: %v\n%s", err, out)
	}
	return bin
}

// startExtDaemon runs the daemon binary with a config for tg and the fake
// CLI; extra is appended to the [claude] table.
func startExtDaemon(tb testing.TB, bin string, tg *telegramtest.Server, claudeExtra string) *extDaemon {
	tb.Helper()
	dir := tb.TempDir()
	claude := fmt.Sprintf("binary = %q\nworkdir = %q\nenv = { %s = \"1\", %s = \"%d\" }\n%s",
		exe(tb), tb.TempDir(), EnvFakeCLI, EnvTools, loadTools, claudeExtra)
	path := daemonConfigFile(tb, tg, claude, filepath.Join(dir, "state"))
	logPath := filepath.Join(dir, "daemon.log")
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the daemon: %v", err)
	}
	d := &extDaemon{cmd: cmd, pid: cmd.Process.Pid, log: logPath}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logf.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tg.Await(ctx, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("getUpdates")) > 0 }); err != nil {
		data, _ := os.ReadFile(logPath)
		tb.Fatalf("daemon not polling: %v\n%s", err, data)
	}
	return d
}

// daemonConfigFile writes an untether.toml for tg, with claude as the body
// of its [claude] table, and returns its path.
func daemonConfigFile(tb testing.TB, tg *telegramtest.Server, claude, stateDir string) string {
	tb.Helper()
	cfg := fmt.Sprintf(`[telegram]
bot_token = %q
api_url = %q
allow_any_user = true

[claude]
%s

[state]
dir = %q

[log]
level = "info"
format = "json"
`, tg.Token(), tg.URL(), claude, stateDir)
	path := filepath.Join(tb.TempDir(), "untether.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// awaitAnswers waits until every tag has an answer in tg (polling a
// snapshot, as the daemon is out of process) and returns how many are
// missing at the deadline.
func awaitAnswers(tg *telegramtest.Server, tags map[string]bool, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		missing := map[string]bool{}
		for t := range tags {
			missing[t] = true
		}
		sn := tg.Snapshot()
		for _, msgs := range sn.Chats {
			for _, m := range msgs {
				if m.FromBot {
					if _, tag, ok := ResultAt(m.Text); ok {
						delete(missing, tag)
					}
				}
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return len(missing)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// BenchmarkDaemonProcess runs the real daemon binary (built from
// ./cmd/untether) as its own process and reads its RSS and CPU time from
// /proc: at idle, then after 200 private chats each finished one 200-tool
// turn with the fake CLI and their CLIs were closed by a 2 s idle_timeout.
// RSS growth includes heap the Go runtime keeps after the peak, so it is an
// upper bound on the per-chat cost; BenchmarkMemory has the live heap.
func BenchmarkDaemonProcess(b *testing.B) {
	bin := buildDaemon(b)
	for i := 0; i < b.N; i++ {
		tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
		tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
		convs := setupConvs(tg, loadScenario{chats: memChats})
		d := startExtDaemon(b, bin, tg, `idle_timeout = "2s"`)
		quiet(tg, 3*time.Second, time.Minute)
		rss0, err := ProcRSS(d.pid)
		if err != nil {
			b.Fatal(err)
		}
		cpu0, _ := ProcCPU(d.pid)
		tags := map[string]bool{}
		for j, c := range convs {
			tag := fmt.Sprintf("d%di%d", j, i)
			tags[tag] = true
			if _, err := tg.TryUserSends(c.chat, c.user, "LOAD "+tag); err != nil {
				b.Fatal(err)
			}
		}
		lost := awaitAnswers(tg, tags, 5*time.Minute)
		cpu1, _ := ProcCPU(d.pid)
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if kids, _ := Descendants(d.pid); len(kids) == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		quiet(tg, 3*time.Second, 2*time.Minute)
		time.Sleep(2 * time.Second)
		rss1, _ := ProcRSS(d.pid)
		frames := memChats * FramesPerTurn(loadTools)
		b.ReportMetric(float64(rss0)/(1<<20), "daemon-rss-idle-MB")
		b.ReportMetric(float64(rss1)/(1<<20), "daemon-rss-after-MB")
		b.ReportMetric(float64(rss1-rss0)/memChats/1024, "daemon-rss-KB/chat")
		b.ReportMetric((cpu1-cpu0).Seconds()/float64(frames)*1000, "daemon-cpu-s/1kframes")
		b.ReportMetric(float64(lost), "lost-answers")
	}
}

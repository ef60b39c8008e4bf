package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/telegramtest"
)

// TestMain turns the test binary into the fake CLI when the bridge starts
// it with EnvFakeCLI set.
func TestMain(m *testing.M) {
	if os.Getenv(EnvFakeCLI) == "1" {
		os.Exit(FakeCLIMain(os.Args[1:], os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// daemonOpts configures one bridge run.
type daemonOpts struct {
	stateDir string            // reused across restarts; a temp dir when empty
	fakeEnv  map[string]string // extra fake-CLI environment (EnvTools, …)
	mutate   func(*config.Config)
	outbox   outbox.Options // zero: the daemon's defaults
}

// daemon is the bridge wired as cmd/untether wires it, against tg.
type daemon struct {
	tb      testing.TB
	tg      *telegramtest.Server
	cfg     *config.Config
	store   *state.Store
	pool    *runner.Pool
	b       *bridge.Bridge
	cancel  context.CancelFunc
	done    chan error
	watch   *finalWatch
	logPath string
	stopped bool
}

func exe(tb testing.TB) string {
	tb.Helper()
	p, err := os.Executable()
	if err != nil {
		tb.Fatalf("find the test binary: %v", err)
	}
	return p
}

// baseConfig is config.Default() pointed at tg and at the fake CLI.
func baseConfig(tb testing.TB, tg *telegramtest.Server, stateDir string, fakeEnv map[string]string) *config.Config {
	c := config.Default()
	c.Telegram.BotToken = config.NewSecret(tg.Token())
	c.Telegram.APIURL = tg.URL()
	c.Telegram.AllowAnyUser = true
	// The forum scenario's group, where every message is a prompt.
	c.Telegram.AllowedChatIDs = []int64{loadGroup}
	c.Telegram.GroupTrigger = config.GroupTriggerAll
	c.Claude.Binary = exe(tb)
	c.Claude.Workdir = tb.TempDir()
	c.Claude.Env = map[string]string{EnvFakeCLI: "1"}
	for k, v := range fakeEnv {
		c.Claude.Env[k] = v
	}
	c.State.Dir = stateDir
	return &c
}

func startDaemon(tb testing.TB, tg *telegramtest.Server, o daemonOpts) *daemon {
	tb.Helper()
	if o.stateDir == "" {
		o.stateDir = tb.TempDir()
	}
	cfg := baseConfig(tb, tg, o.stateDir, o.fakeEnv)
	if o.mutate != nil {
		o.mutate(cfg)
	}
	store, err := state.Open(context.Background(), o.stateDir)
	if err != nil {
		tb.Fatalf("open state: %v", err)
	}
	d := &daemon{tb: tb, tg: tg, cfg: cfg, store: store, done: make(chan error, 1),
		pool:    runner.NewPool(cfg.Claude.MaxLiveProcesses, cfg.Claude.MaxConcurrentSpawns),
		watch:   &finalWatch{next: http.DefaultTransport, seen: map[string]chan struct{}{}},
		logPath: filepath.Join(tb.TempDir(), "untether.log")}
	logFile, err := os.Create(d.logPath)
	if err != nil {
		tb.Fatalf("create log: %v", err)
	}
	tb.Cleanup(func() { _ = logFile.Close() })
	ready := make(chan struct{})
	d.b, err = bridge.New(bridge.Options{
		Config: cfg, Store: store, Pool: d.pool,
		// As in production: info level, every line encoded and written.
		Logger:     zerolog.New(logFile).Level(zerolog.InfoLevel).With().Timestamp().Logger(),
		InheritEnv: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")},
		HTTPClient: &http.Client{Transport: d.watch, Timeout: cfg.Telegram.PollTimeout.Std() + 15*time.Second},
		Outbox:     o.outbox,
		Ready:      func() { close(ready) },
	})
	if err != nil {
		tb.Fatalf("new bridge: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() { d.done <- d.b.Run(ctx) }()
	tb.Cleanup(d.stop)
	// Ready fires when the first getUpdates returns, which on an idle bot
	// is a whole poll_timeout (30 s) later; the daemon can take messages as
	// soon as that first long poll is open, since the fake wakes it at once.
	polling := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := tg.Await(ctx, func(sn *telegramtest.Snapshot) bool { return len(sn.CallsOf("getUpdates")) > 0 })
		polling <- err
	}()
	select {
	case <-ready:
	case err := <-polling:
		if err != nil {
			tb.Fatalf("bridge not polling after 30s: %v", err)
		}
	case err := <-d.done:
		tb.Fatalf("bridge stopped before it was ready: %v", err)
	}
	return d
}

// stop shuts the bridge down as the daemon does on SIGTERM. Messages the
// outbox could not flush in time are logged, not fatal: under the group
// limit a forum's tail of progress edits can take minutes.
func (d *daemon) stop() {
	if d.stopped {
		return
	}
	d.stopped = true
	d.cancel()
	select {
	case err := <-d.done:
		if err != nil {
			d.tb.Logf("bridge run: %v", err)
		}
	case <-time.After(time.Minute):
		d.tb.Errorf("bridge did not stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.b.Shutdown(ctx); err != nil {
		d.tb.Logf("shutdown: %v", err)
	}
	if err := d.store.Close(); err != nil {
		d.tb.Logf("close state: %v", err)
	}
}

// logErrors is the first n error lines of the daemon's log.
func (d *daemon) logErrors(n int) string {
	data, _ := os.ReadFile(d.logPath)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"level":"error"`) && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// finalWatch sits between the bot client and the transport and notices
// every successful sendMessage carrying a fake-CLI answer, so waiting for
// hundreds of answers needs no snapshot polling. Timing always comes from
// the fake Telegram's own call log, not from here.
type finalWatch struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]chan struct{} // tag → closed once its answer was sent
	done map[string]bool
	fail map[string]bool // the "answer" was an error notice
}

func (w *finalWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasSuffix(req.URL.Path, "/sendMessage") {
		return resp, err
	}
	body, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil || !bytes.Contains(body, []byte(ResultMarker)) && !bytes.Contains(body, []byte("LOAD ")) {
		return resp, nil
	}
	var env struct {
		OK     bool `json:"ok"`
		Result struct {
			Text    string     `json:"text"`
			ReplyTo *repliedTo `json:"reply_to_message"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &env) != nil || !env.OK {
		return resp, nil
	}
	if _, tag, ok := ResultAt(env.Result.Text); ok {
		w.mark(tag, false)
	} else if f := strings.Fields(replyText(env.Result.ReplyTo)); strings.HasPrefix(env.Result.Text, "⚠️") && len(f) >= 2 && f[0] == "LOAD" {
		// An error notice instead of the answer: the answer is lost, and
		// waiting longer would only stretch the run.
		w.mark(f[1], true)
	}
	return resp, nil
}

type repliedTo struct {
	Text string `json:"text"`
}

func replyText(r *repliedTo) string {
	if r == nil {
		return ""
	}
	return r.Text
}

// errErrorReply means the bridge answered with an error notice.
var errErrorReply = errors.New("error notice instead of the answer")

func (w *finalWatch) chanLocked(tag string) chan struct{} {
	ch := w.seen[tag]
	if ch == nil {
		ch = make(chan struct{})
		w.seen[tag] = ch
	}
	return ch
}

func (w *finalWatch) mark(tag string, failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		w.done, w.fail = map[string]bool{}, map[string]bool{}
	}
	if !w.done[tag] {
		w.done[tag], w.fail[tag] = true, failed
		close(w.chanLocked(tag))
	}
}

// wait blocks until the answer tagged tag was sent or ctx ends.
func (w *finalWatch) wait(ctx context.Context, tag string) error {
	w.mu.Lock()
	ch := w.chanLocked(tag)
	w.mu.Unlock()
	select {
	case <-ch:
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.fail[tag] {
			return errErrorReply
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// quiet waits until Telegram has seen no call but getUpdates for idle, or
// limit passed; it returns the time of the last such call.
func quiet(tg *telegramtest.Server, idle, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	var last time.Time
	for {
		sn := tg.Snapshot()
		for i := len(sn.Calls) - 1; i >= 0; i-- {
			if sn.Calls[i].Method != "getUpdates" {
				last = sn.Calls[i].Time
				break
			}
		}
		if time.Since(last) >= idle || time.Now().After(deadline) {
			return last
		}
		time.Sleep(250 * time.Millisecond)
	}
}

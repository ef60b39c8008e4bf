package bridge_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service"
	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/service/metrics"
	"github.com/untether/untether/internal/telegramtest"
)

// opsRig runs the HTTP service beside each bridge the rig starts, wired
// as cmd/untether wires it: the bridge feeds the metrics and the health
// conditions, the first poll makes it ready, the triggers module fires
// the webhooks. A restart of the rig is a new process: new metrics, a new
// listener.
type opsRig struct {
	triggers []config.Trigger
	// clientTimeout, when set, replaces the Telegram client's timeout of
	// 10 s, which would fail a held poll long before the update loop
	// looks wedged (a failed poll is progress: Telegram may be down).
	clientTimeout time.Duration

	m     *metrics.Metrics
	gate  *health.Gate
	conds *health.Conditions
	svc   *service.Service
	url   string
}

func withOps(triggers ...config.Trigger) rigOption {
	return func(r *rig) { r.ops = &opsRig{triggers: triggers} }
}

// withPollClientTimeout sets the Telegram client's timeout; after withOps.
func withPollClientTimeout(d time.Duration) rigOption {
	return func(r *rig) { r.ops.clientTimeout = d }
}

func (o *opsRig) wire(opts *bridge.Options) {
	if o == nil {
		return
	}
	o.m = metrics.New(metrics.Build{Version: "test", Commit: "abc"}, zerolog.Nop())
	o.gate, o.conds = &health.Gate{}, &health.Conditions{}
	opts.Config.Triggers = o.triggers
	opts.Metrics = o.m
	opts.StateWatch = service.StateFaults{Metrics: o.m, Conditions: o.conds}
	ready := opts.Ready
	opts.Ready = func() { o.gate.MarkReady(); ready() }
	if o.clientTimeout > 0 {
		opts.HTTPClient = &http.Client{Timeout: o.clientTimeout}
	}
}

func (o *opsRig) serve(r *rig, b *bridge.Bridge) {
	if o == nil {
		return
	}
	hooks := b.Webhooks()
	svc, err := service.New(service.Options{Listen: "127.0.0.1:0", Triggers: o.triggers, Live: b, Ready: o.gate,
		Degraded: o.conds, Metrics: o.m, Fire: hooks, Seen: hooks, Log: zerolog.New(r.logs)})
	require.NoError(r.t, err)
	require.NoError(r.t, svc.Start(context.Background()))
	o.svc, o.url = svc, "http://"+svc.Addr().String()
}

func (o *opsRig) close(t *testing.T) {
	if o == nil || o.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.NoError(t, o.svc.Shutdown(ctx))
	o.svc = nil
}

// get asks the service for path.
func (o *opsRig) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(o.url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// scrape is one scrape of /metrics, parsed.
type scrape map[string]*dto.MetricFamily

func (o *opsRig) scrape(t *testing.T) scrape {
	t.Helper()
	code, body := o.get(t, "/metrics")
	require.Equal(t, http.StatusOK, code)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	return fams
}

// value sums the series of name whose labels include labels (name, value
// pairs): a counter's or gauge's value, a histogram's count of samples.
// A series not there yet counts 0, as Prometheus reads a counter that
// never moved.
func (s scrape) value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// TestMetricsAfterATurn scrapes /metrics before, during and after a turn
// of the real CLI with a tool approval and a 429 on the way, and checks
// that what happened moved: the turn counted once as answered, its cost
// and tokens, the CLI spawned, the approval pending then decided, the
// answer's latency, the Bot API calls by method and status (the 429 among
// them) with its penalty, the getUpdates lag and last success, and the CLI
// version the turn reported.
func TestMetricsAfterATurn(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withClaude(), withOps())
	waitReady(r)
	before := r.ops.scrape(t)
	assert.Equal(t, 1.0, before.value(metrics.NameBuildInfo, "version", "test", "commit", "abc"))

	r.tg.FailNext("sendMessage", 1, http.StatusTooManyRequests, "Too Many Requests: retry after 1", 1)
	in := r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	during := r.ops.scrape(t)
	assert.Equal(t, 1.0, during.value(metrics.NamePendingApprovals), "the approval waits for a person")
	assert.Equal(t, 1.0, during.value(metrics.NameLiveCLIs), "the chat's CLI runs")
	assert.Equal(t, before.value(metrics.NameTurnsStarted, "project", "default")+1, during.value(metrics.NameTurnsStarted, "project", "default"))
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.finalAnswer(chat, in.ID, "The command ran.")

	var after scrape
	require.Eventually(t, func() bool {
		after = r.ops.scrape(t)
		// The answer's call is counted once Telegram accepted it, on the
		// outbox's goroutine; the turn's end, cost and tokens on the actor,
		// after the engine queued the answer: either may come first.
		return after.value(metrics.NameAnswerLatency) > before.value(metrics.NameAnswerLatency) &&
			after.value(metrics.NameTurnsFinished) > before.value(metrics.NameTurnsFinished) &&
			after.value(metrics.NameTokens) > before.value(metrics.NameTokens)
	}, wait, 20*time.Millisecond)
	delta := func(name string, labels ...string) float64 {
		return after.value(name, labels...) - before.value(name, labels...)
	}
	assert.Equal(t, 1.0, delta(metrics.NameTurnsStarted, "project", "default"))
	assert.Equal(t, 1.0, delta(metrics.NameTurnsFinished, "project", "default", "outcome", "answered"))
	assert.Equal(t, 1.0, delta(metrics.NameTurnsFinished), "one turn, one outcome")
	assert.Equal(t, 1.0, delta(metrics.NameAnswerLatency), "one answer, in one part")
	assert.Greater(t, delta(metrics.NameCostUSD, "project", "default"), 0.0)
	assert.Greater(t, delta(metrics.NameTokens, "project", "default", "kind", "input"), 0.0)
	assert.Greater(t, delta(metrics.NameTokens, "project", "default", "kind", "output"), 0.0)
	assert.Equal(t, 1.0, delta(metrics.NameCLISpawns, "project", "default"))
	assert.Zero(t, delta(metrics.NameCLICrashes))
	assert.Equal(t, 1.0, delta(metrics.NameApprovalWait, "decision", "approved"))
	assert.Zero(t, after.value(metrics.NamePendingApprovals))
	assert.Equal(t, 1.0, delta(metrics.NameBotAPICalls, "method", "sendMessage", "status", "429"))
	assert.GreaterOrEqual(t, delta(metrics.NameBotAPICalls, "method", "sendMessage", "status", "200"), 2.0, "the approval and the answer")
	assert.Greater(t, delta(metrics.NameBotAPICalls, "method", "getUpdates", "status", "200"), 0.0)
	assert.GreaterOrEqual(t, delta(metrics.NamePenaltySeconds), 1.0, "the 429's retry_after")
	assert.Greater(t, delta(metrics.NameUpdateLag), 0.0, "the message and the press were polled")
	assert.Equal(t, 1.0, after.value(metrics.NameCLIInfo, "version", "2.1.328"), "the version the turn reported")
	last := after.value(metrics.NameLastPollSuccess)
	assert.InDelta(t, float64(time.Now().Unix()), last, 10, "getUpdates succeeded just now")
	assert.Zero(t, after.value(metrics.NameWaitingForSlot))
	assert.Zero(t, after.value(metrics.NameChatsInPenalty), "the 1 s pause is over")

	// A slow answer streams: its progress message is edited, and each edit
	// that replaced what it showed is measured.
	slow := r.say(chat, alice, "STEADY please")
	r.finalAnswer(chat, slow.ID, "steady words")
	edits := 0
	for _, c := range r.tg.Snapshot().CallsOf("editMessageText") {
		if c.Chat == chat && c.OK() {
			edits++
		}
	}
	require.Eventually(t, func() bool { return r.ops.scrape(t).value(metrics.NameProgressStale) > 0 }, wait, 20*time.Millisecond,
		"%d edits of the chat's messages", edits)
}

// TestHealthzOnAFullDisk: while the state database refuses writes,
// /healthz stays 200 (a restart would lose what is kept in memory) and
// names the trouble; the refused writes are counted by kind; turns are
// still answered. Once writes work again the trouble is gone.
func TestHealthzOnAFullDisk(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	var full atomic.Bool
	r := newRig(t, withClaude(), withOps())
	waitReady(r)
	code, body := r.ops.get(t, "/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	r.store.InjectWriteFault(diskFull(&full))
	full.Store(true)

	in := r.say(chat, alice, "quick one")
	r.finalAnswer(chat, in.ID, "echo: quick one")
	code, body = r.ops.get(t, "/healthz")
	assert.Equal(t, http.StatusOK, code, "a full disk does not fail liveness")
	assert.Regexp(t, `^ok\ndegraded: state: state writes are refused and kept in memory until they succeed, so a restart now would lose them: .*the disk is full \(for \d+\S*\)\n$`, body)
	code, _ = r.ops.get(t, "/readyz")
	assert.Equal(t, http.StatusOK, code)
	require.Eventually(t, func() bool { // the turn is recorded once its answer is on its way
		s := r.ops.scrape(t)
		return s.value(metrics.NameStateRefused, "kind", "updates") > 0 && s.value(metrics.NameStateRefused, "kind", "chat") > 0 &&
			s.value(metrics.NameStateRefused, "kind", "turn") > 0
	}, wait, 20*time.Millisecond, "refused writes counted by kind")

	full.Store(false)
	require.Eventually(t, func() bool { _, body := r.ops.get(t, "/healthz"); return body == "ok\n" }, wait, 20*time.Millisecond,
		"the trouble is gone once every kept write is saved")
}

// TestHealthzWhilePollWedged: /healthz is what the systemd watchdog is
// fed by. While getUpdates hangs (the fake Telegram holds every poll) it
// turns 503 with the reason once the update loop has made no progress
// for two long polls and 30 s; /readyz stays 200 (the daemon is not
// stopping). Once polls complete again, /healthz is 200 again.
func TestHealthzWhilePollWedged(t *testing.T) {
	// Held polls fail after 45 s, later than the 34 s of no progress that
	// make the loop wedged (2 × poll_timeout of 2 s, plus 30 s).
	r := newRig(t, withOps(), withPollClientTimeout(45*time.Second))
	waitReady(r)
	code, body := r.ops.get(t, "/healthz")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = r.ops.get(t, "/readyz")
	require.Equal(t, http.StatusOK, code)

	r.tg.Delay("getUpdates", time.Hour) // every poll now hangs until the client gives up
	wedged := time.Now()
	require.Eventually(t, func() bool { code, body = r.ops.get(t, "/healthz"); return code == http.StatusServiceUnavailable },
		2*wait, 200*time.Millisecond)
	t.Logf("/healthz failed %v after the wedge", time.Since(wedged).Round(time.Second))
	assert.Regexp(t, `^unhealthy: no getUpdates poll finished since \S+\n$`, body)
	code, _ = r.ops.get(t, "/readyz")
	assert.Equal(t, http.StatusOK, code, "a wedge is liveness, not readiness")
	last := r.ops.scrape(t).value(metrics.NameLastPollSuccess)
	assert.Greater(t, float64(time.Now().Unix())-last, 30.0, "no poll succeeded for that long")

	r.tg.Delay("getUpdates", 0)
	require.Eventually(t, func() bool { code, _ := r.ops.get(t, "/healthz"); return code == http.StatusOK }, 2*wait, 200*time.Millisecond,
		"healthy again once the held poll gives up and the next one completes")
}

// TestMetricsCountCancelsAndCrashes: a turn a person cancels is counted
// as cancelled; a CLI killed mid-turn as a crash, its turn as crashed,
// and the CLI the next message starts as a restart.
func TestMetricsCountCancelsAndCrashes(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withClaude(), withOps())
	waitReady(r)
	before := r.ops.scrape(t)

	in := r.busy(chat)
	prog := r.waitBot(chat, "progress message", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && buttonData(m, "Cancel") != "" })
	r.tg.UserPresses(chat, prog.ID, buttonData(prog, "Cancel"))
	r.waitBot(chat, "stopped notice", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && strings.Contains(m.Text, "Stopped") })

	in = r.busy(chat)
	r.streaming(chat, in.ID, "steady words") // the CLI has started the turn
	pid := r.b.ChatPID(key)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	r.waitBot(chat, "the crash notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "Claude stopped unexpectedly")
	})
	r.ask(chat, "after the crash")

	var after scrape
	delta := func(name string, labels ...string) float64 {
		return after.value(name, labels...) - before.value(name, labels...)
	}
	require.Eventually(t, func() bool { // the answer may be seen before the hooks after it ran
		after = r.ops.scrape(t)
		return delta(metrics.NameTurnsFinished, "outcome", "answered") == 1
	}, wait, 20*time.Millisecond)
	assert.Equal(t, 3.0, delta(metrics.NameTurnsStarted, "project", "default"))
	assert.Equal(t, 1.0, delta(metrics.NameTurnsFinished, "outcome", "cancelled"))
	assert.Equal(t, 1.0, delta(metrics.NameTurnsFinished, "outcome", "crashed"))
	assert.Equal(t, 3.0, delta(metrics.NameTurnsFinished), "each turn once")
	assert.Equal(t, 1.0, delta(metrics.NameCLICrashes, "project", "default"))
	assert.Equal(t, 1.0, delta(metrics.NameCLIRestarts, "project", "default"))
	assert.Equal(t, 2.0, delta(metrics.NameCLISpawns, "project", "default"), "the first CLI and the one after the crash")
}

// TestMetricsSlotWait: with one live slot held by a turn waiting for an
// approval, another chat's message waits for it: the scrape shows one
// live CLI, one chat waiting for a slot, one approval pending; once the
// approval is decided and the slot frees, nobody waits.
func TestMetricsSlotWait(t *testing.T) {
	chatA := telegramtest.ChatID(alice)
	r := newRig(t, withOps(), withConfig(func(c *config.Config) { c.Claude.MaxLiveProcesses = 1 }))
	chatB := r.addPrivateChat(bob, "Bob")
	inA := r.say(chatA, alice, "BASHRUN please")
	apA := r.approvalMessage(chatA, "echo hi > out.txt")
	inB := r.say(chatB, bob, "from B")
	r.waitBot(chatB, "slot notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == inB.ID && strings.Contains(m.Text, "Waiting for a free Claude slot")
	})
	s := r.ops.scrape(t)
	assert.Equal(t, 1.0, s.value(metrics.NameLiveCLIs))
	assert.Equal(t, 1.0, s.value(metrics.NameWaitingForSlot))
	assert.Equal(t, 1.0, s.value(metrics.NamePendingApprovals))

	r.tg.UserPresses(chatA, apA.ID, buttonData(apA, "Approve"))
	r.finalAnswer(chatA, inA.ID, "The command ran.")
	r.finalAnswer(chatB, inB.ID, "echo: from B")
	s = r.ops.scrape(t)
	assert.Zero(t, s.value(metrics.NameWaitingForSlot))
	assert.Zero(t, s.value(metrics.NamePendingApprovals))
	assert.Equal(t, 1.0, s.value(metrics.NameLiveCLIs), "B's CLI took the slot A's left")
}

// TestMetricsOutboxDepth: while Telegram is slow to take sends, the parts
// of a long answer queue in the outbox and the scrape shows them as high
// priority; once it is fast again the queues empty.
func TestMetricsOutboxDepth(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withOps())
	waitReady(r)
	r.tg.Delay("sendMessage", 3*time.Second)
	r.say(chat, alice, "LONGANSWER please") // four parts
	require.Eventually(t, func() bool { return r.ops.scrape(t).value(metrics.NameOutboxDepth, "priority", "high") >= 2 }, wait,
		20*time.Millisecond, "the answer's later parts wait behind the slow send")
	r.tg.Delay("sendMessage", 0)
	r.waitBot(chat, "the answer's last part", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "THE-END") })
	require.Eventually(t, func() bool {
		s := r.ops.scrape(t)
		return s.value(metrics.NameOutboxDepth, "priority", "high") == 0 && s.value(metrics.NameOutboxDepth, "priority", "low") == 0
	}, wait, 20*time.Millisecond)
}

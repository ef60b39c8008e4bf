package loadtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/telegramtest"
)

// jumpClock is real time plus an offset a benchmark can advance at once,
// firing every timer that falls due. Handed to the outbox, it lets the
// outbox live through a 10-minute outage (its backoff grows, its retries
// fail) in seconds of real time; the rest of the daemon and the fake
// Telegram keep real time.
type jumpClock struct {
	mu     sync.Mutex
	offset time.Duration
	timers map[*jumpTimer]struct{}
}

type jumpTimer struct {
	at time.Time
	ch chan time.Time
}

func newJumpClock() *jumpClock { return &jumpClock{timers: map[*jumpTimer]struct{}{}} }

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	t := &jumpTimer{ch: make(chan time.Time, 1)}
	c.mu.Lock()
	t.at = time.Now().Add(c.offset + d)
	c.timers[t] = struct{}{}
	c.mu.Unlock()
	time.AfterFunc(d, func() { c.fire(t) })
	return t.ch
}

func (c *jumpClock) fire(t *jumpTimer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.timers[t]; ok {
		delete(c.timers, t)
		t.ch <- time.Now().Add(c.offset)
	}
}

// Jump moves the clock d ahead and fires the timers now due.
func (c *jumpClock) Jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	now := time.Now().Add(c.offset)
	for t := range c.timers {
		if !t.at.After(now) {
			delete(c.timers, t)
			t.ch <- now
		}
	}
}

type outageScenario struct {
	name   string
	outage time.Duration
	jumped bool // the outbox's clock is jumped through the outage
}

// outageChats is how many private chats each have an answer queued when
// Telegram comes back.
const outageChats = 3

// BenchmarkOutage: Telegram answers every call (getUpdates included) with
// 502 while a turn finishes in each of three private chats, for 10 s, 60 s
// or 10 min; then it is back. Reported: from the moment Telegram is back to
// each answer's sendMessage reaching it, and answers sent more than once.
//
// The 10 s and 60 s outages run in real time. The 10-minute one gives the
// outbox a clock that jumps 1 s every 5 ms of real time once the turns have
// finished, so the outbox lives through 10 minutes of backoff and failed
// retries in about 4 s; everything else in the daemon (its getUpdates
// backoff, capped by the library at 5 s, included) sees only those seconds.
func BenchmarkOutage(b *testing.B) {
	for _, sc := range []outageScenario{
		{name: "10s", outage: 10 * time.Second},
		{name: "60s", outage: time.Minute},
		{name: "10min-jumped", outage: 10 * time.Minute, jumped: true},
	} {
		b.Run(sc.name, func(b *testing.B) { runOutage(b, sc) })
	}
}

func runOutage(b *testing.B, sc outageScenario) {
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
	convs := setupConvs(tg, loadScenario{chats: outageChats})
	var opts outbox.Options
	var clock *jumpClock
	if sc.jumped {
		clock = newJumpClock()
		opts.Clock = clock
	}
	d := startDaemon(b, tg, daemonOpts{outbox: opts})

	var recovery []time.Duration
	var dups, lost, outageCalls int
	var outageSpan time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		tags := make([]string, len(convs))
		for j, c := range convs {
			tags[j] = fmt.Sprintf("o%dc%d", i, j)
			// About 2 s of tool calls: the outage starts while the turn
			// runs, so its progress message and its answer both meet it.
			if _, err := tg.TryUserSends(c.chat, c.user, "LOAD "+tags[j]+" tools=10 gap=200ms"); err != nil {
				b.Fatalf("send: %v", err)
			}
		}
		// The outage starts once every chat's turn began (its typing
		// action reached Telegram).
		waitCalls(b, tg, func(sn *callView) bool {
			for _, c := range convs {
				if !sn.hasCall("sendChatAction", c.chat, start) {
					return false
				}
			}
			return true
		})
		down := time.Now()
		stop := tg.FailWhen(func(telegramtest.Call) bool { return true }, telegramtest.Fault{Code: 502, Description: "Bad Gateway"})
		if sc.jumped {
			time.Sleep(4 * time.Second) // the turns finish; their answers fail
			for jumped := 4 * time.Second; jumped < sc.outage; jumped += time.Second {
				clock.Jump(time.Second)
				time.Sleep(5 * time.Millisecond)
			}
		} else {
			time.Sleep(sc.outage)
		}
		up := time.Now()
		stop()
		outageSpan += up.Sub(down)
		for _, tag := range tags {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			if d.watch.wait(ctx, tag) != nil {
				lost++
			}
			cancel()
		}
		sn := tg.Snapshot()
		for _, tag := range tags {
			var sent []time.Time
			for _, c := range sn.Calls {
				if c.Method == "sendMessage" && c.OK() && strings.Contains(c.Params["text"], TagPrefix+tag+".") {
					sent = append(sent, c.Time)
				}
			}
			if len(sent) > 0 {
				recovery = append(recovery, sent[0].Sub(up))
				dups += len(sent) - 1
			}
		}
		for _, c := range sn.Calls {
			if c.Method != "getUpdates" && !c.Time.Before(down) && c.Time.Before(up) {
				outageCalls++
			}
		}
		// The next round starts with settled pacing and no leftovers.
		quiet(tg, 3*time.Second, time.Minute)
	}
	b.StopTimer()
	b.ReportMetric(Ms(Percentile(recovery, 50)), "visible-after-up-p50-ms")
	b.ReportMetric(Ms(Percentile(recovery, 100)), "visible-after-up-max-ms")
	b.ReportMetric(float64(dups), "dup-answers")
	b.ReportMetric(float64(lost), "lost-answers")
	// Calls per second of outage as the outbox lived it (the jumped clock's
	// 10 minutes, not the few real seconds they took).
	if sc.jumped {
		outageSpan = time.Duration(b.N) * sc.outage
	}
	b.ReportMetric(float64(outageCalls)/outageSpan.Seconds(), "calls/s-while-down")
	b.Logf("%s: %d answers, visible after Telegram was back: %s; %d duplicates, %d lost, %d calls while down (getUpdates excluded)",
		sc.name, len(recovery), durations(recovery), dups, lost, outageCalls)
}

func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strings.Join(s, " ")
}

func waitCalls(b *testing.B, tg *telegramtest.Server, pred func(*callView) bool) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := tg.Await(ctx, func(sn *telegramtest.Snapshot) bool { return pred(&callView{sn}) }); err != nil {
		b.Fatalf("wait for calls: %v", err)
	}
}

// callView adds the look-ups the outage benchmark needs to a snapshot.
type callView struct{ *telegramtest.Snapshot }

func (v *callView) hasCall(method string, chat telegramtest.ChatID, since time.Time) bool {
	for _, c := range v.Calls {
		if c.Method == method && c.Chat == chat && !c.Time.Before(since) {
			return true
		}
	}
	return false
}

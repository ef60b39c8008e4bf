package loadtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// The peer figures (issue 5): a Go peer bridge measured on a fake Telegram,
// a fake API and the real CLI 2.1.328, medians on 2 cores. Ours are measured
// the same way: from the user message arriving at the fake Telegram to the
// answer arriving there, with the real pinned CLI against fakeapi, flood
// limits enforced, and the daemon's default outbox pacing and progress
// settings.

const alice = telegramtest.UserID(1001)

// streamWords makes a ~2,000-byte answer that fakeapi streams in ~50
// deltas; at 100 ms per SSE event it takes about 5.5 s.
func streamWords() string {
	var b strings.Builder
	for i := 1; b.Len() < 2000; i++ {
		fmt.Fprintf(&b, "alpha-%04d ", i)
	}
	return strings.TrimSpace(b.String())
}

func peerScript() fakeapi.Script {
	yes, no := fakeapi.Bool(true), fakeapi.Bool(false)
	return fakeapi.Script{Rules: []fakeapi.Rule{
		{Name: "bash-after", When: fakeapi.Match{AnyUserContains: "BASHRUN", LastIsToolResult: yes},
			Replies: []fakeapi.Reply{fakeapi.Text("The command ran.")}},
		{Name: "bash", When: fakeapi.Match{PromptContains: "BASHRUN", LastIsToolResult: no},
			Replies: []fakeapi.Reply{fakeapi.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"})}},
		{Name: "stream", When: fakeapi.Match{PromptContains: "STREAM55"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(streamWords())}, ChunkDelayMs: 100}}},
	}}
}

// peerRig is a daemon driving the real CLI, and its single private chat.
type peerRig struct {
	tg     *telegramtest.Server
	claude *claudetest.Env
	d      *daemon
	dir    string
	chat   telegramtest.ChatID
	user   telegramtest.User
}

func realCLI(env *claudetest.Env, more func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.Claude.Binary = env.Binary
		c.Claude.Workdir = env.Workdir
		c.Claude.Env = env.Vars
		if more != nil {
			more(c)
		}
	}
}

func newPeerRig(b *testing.B, more func(*config.Config)) *peerRig {
	b.Helper()
	r := &peerRig{tg: telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot")),
		claude: claudetest.New(b, peerScript()), dir: b.TempDir(),
		chat: telegramtest.ChatID(alice), user: telegramtest.User{ID: alice, FirstName: "Alice"}}
	r.tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
	r.tg.AddChat(telegramtest.Chat{ID: r.chat, Type: telegramtest.Private, FirstName: "Alice"})
	r.d = startDaemon(b, r.tg, daemonOpts{stateDir: r.dir, mutate: realCLI(r.claude, more)})
	return r
}

func (r *peerRig) restart(b *testing.B, more func(*config.Config)) {
	r.d.stop()
	r.d = startDaemon(b, r.tg, daemonOpts{stateDir: r.dir, mutate: realCLI(r.claude, more)})
}

// say sends text and returns the message as it arrived at the fake.
func (r *peerRig) say(b *testing.B, text string) telegramtest.Message {
	m, err := r.tg.TryUserSends(r.chat, r.user, text)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// answered waits for the first successful sendMessage to the chat since
// since whose text contains want, and returns its arrival time.
func (r *peerRig) answered(since time.Time, want string, limit time.Duration) (time.Time, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var at time.Time
	_, err := r.tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
		for _, c := range sn.Calls {
			if c.Method == "sendMessage" && c.OK() && c.Chat == r.chat && !c.Time.Before(since) && strings.Contains(c.Params["text"], want) {
				at = c.Time
				return true
			}
		}
		return false
	})
	return at, err == nil
}

// modelCallAt is when fakeapi received the first model call whose prompt
// contains s.
func (r *peerRig) modelCallAt(s string) time.Time {
	for _, c := range r.claude.API.ModelCalls() {
		if strings.Contains(c.LastPrompt(), s) {
			return c.Time
		}
	}
	return time.Time{}
}

func median(xs []time.Duration) time.Duration { return Percentile(xs, 50) }

// BenchmarkPeerWarmTurn: one cold first message, then 10 warm turns 3 s
// apart (so every turn starts with the chat's pacing bucket full, as a
// human's next message would), each from the user message arriving at the
// fake Telegram to the answer arriving there. Also the Bot API calls and
// 4xx answers of each simple turn (until the chat is quiet again).
func BenchmarkPeerWarmTurn(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := newPeerRig(b, nil)
		in := r.say(b, "hello 0")
		at, ok := r.answered(in.Date, "echo: hello 0", time.Minute)
		if !ok {
			b.Fatalf("no answer to the first message")
		}
		cold := at.Sub(in.Date)
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
		var warm, toModel, fromModel []time.Duration
		var calls []int
		n4xx := 0
		for t := 1; t <= 10; t++ {
			time.Sleep(3 * time.Second)
			text := fmt.Sprintf("hello %d", t)
			in := r.say(b, text)
			at, ok := r.answered(in.Date, "echo: "+text, time.Minute)
			if !ok {
				b.Fatalf("no answer to %q", text)
			}
			warm = append(warm, at.Sub(in.Date))
			if m := r.modelCallAt(text); !m.IsZero() {
				toModel = append(toModel, m.Sub(in.Date))
				fromModel = append(fromModel, at.Sub(m))
			}
			quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
			n := 0
			for _, c := range r.tg.Calls() {
				if c.Method == "getUpdates" || c.Time.Before(in.Date) {
					continue
				}
				n++
				if c.Status >= 400 && c.Status < 500 {
					n4xx++
					b.Logf("turn %d: %s → %d %s", t, c.Method, c.Status, c.Description)
				}
			}
			calls = append(calls, n)
		}
		b.ReportMetric(Ms(median(warm)), "warm-p50-ms")
		b.ReportMetric(Ms(slices.Max(warm)), "warm-max-ms")
		b.ReportMetric(Ms(median(toModel)), "warm-to-model-p50-ms")
		b.ReportMetric(Ms(median(fromModel)), "warm-model-to-answer-p50-ms")
		b.ReportMetric(Ms(cold), "cold-first-ms")
		b.ReportMetric(float64(slices.Max(calls)), "calls/turn-max")
		b.ReportMetric(float64(n4xx), "4xx")
		b.Logf("warm turns %v; calls per turn %v; cold first message %v", warm, calls, cold)
	}
}

// BenchmarkPeerStreaming: a 5.5 s streamed answer (fakeapi, 100 ms between
// SSE events). Measured from fakeapi receiving the model request to the
// first streamed words arriving at the fake Telegram (in the progress
// message, or a draft), after a warm-up turn so no CLI start is included.
func BenchmarkPeerStreaming(b *testing.B) {
	r := newPeerRig(b, nil)
	in := r.say(b, "warm up")
	if _, ok := r.answered(in.Date, "echo: warm up", time.Minute); !ok {
		b.Fatal("no answer to the warm-up message")
	}
	var first, total []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(3 * time.Second)
		prompt := fmt.Sprintf("STREAM55 number %d", i)
		in := r.say(b, prompt)
		at, ok := r.answered(in.Date, "alpha-0180", 2*time.Minute)
		if !ok {
			b.Fatal("no streamed answer")
		}
		req := r.modelCallAt(prompt)
		sn := r.tg.Snapshot()
		var shown time.Time
		for _, c := range sn.Calls {
			if c.OK() && c.Time.After(in.Date) && (c.Method == "editMessageText" || c.Method == "sendMessage" || c.Method == "sendMessageDraft") &&
				strings.Contains(c.Params["text"], "alpha-") {
				shown = c.Time
				break
			}
		}
		if shown.IsZero() || shown.Equal(at) {
			b.Logf("turn %d: no streamed text before the answer", i)
			shown = at
		}
		first = append(first, shown.Sub(req))
		total = append(total, at.Sub(req))
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
	}
	b.StopTimer()
	b.ReportMetric(Ms(median(first)), "first-text-p50-ms")
	b.ReportMetric(Ms(slices.Max(first)), "first-text-max-ms")
	b.ReportMetric(Ms(median(total)), "answer-p50-ms")
	b.Logf("first streamed text after the model request: %v; answer after %v", first, total)
}

// BenchmarkPeerApproval: a button press on an approval prompt, from the
// press arriving at the fake Telegram to answerCallbackQuery arriving
// there; also to the prompt's edit and to the final answer.
func BenchmarkPeerApproval(b *testing.B) {
	r := newPeerRig(b, nil)
	var ack, edited, final []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.say(b, fmt.Sprintf("BASHRUN please %d", i))
		var ap telegramtest.Message
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := r.tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
			for _, m := range sn.BotMessages(r.chat) {
				for _, row := range m.Keyboard {
					for _, k := range row {
						if strings.Contains(k.Text, "Approve") {
							ap = m
							return true
						}
					}
				}
			}
			return false
		})
		cancel()
		if err != nil {
			b.Fatalf("no approval prompt: %v", err)
		}
		var data string
		for _, row := range ap.Keyboard {
			for _, k := range row {
				if strings.Contains(k.Text, "Approve") {
					data = k.CallbackData
				}
			}
		}
		pressed := time.Now()
		q := r.tg.UserPresses(r.chat, ap.ID, data)
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		sn, err := r.tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
			m, _ := sn.Message(r.chat, ap.ID)
			return len(m.Keyboard) == 0 && slices.ContainsFunc(sn.CallbackAnswers, func(a telegramtest.CallbackAnswer) bool { return a.QueryID == q })
		})
		cancel()
		if err != nil {
			b.Fatalf("press not handled: %v", err)
		}
		for _, a := range sn.CallbackAnswers {
			if a.QueryID == q {
				ack = append(ack, a.Time.Sub(pressed))
			}
		}
		for _, c := range sn.Calls {
			if c.Method == "editMessageText" && c.OK() && c.Time.After(pressed) && c.Params["message_id"] == fmt.Sprint(ap.ID) {
				edited = append(edited, c.Time.Sub(pressed))
				break
			}
		}
		at, ok := r.answered(pressed, "The command ran.", time.Minute)
		if !ok {
			b.Fatal("no answer after approval")
		}
		final = append(final, at.Sub(pressed))
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
		_ = os.Remove(r.claude.Workdir + "/out.txt")
	}
	b.StopTimer()
	b.ReportMetric(Ms(median(ack)), "press-to-answerCallback-p50-ms")
	b.ReportMetric(Ms(median(edited)), "press-to-prompt-edit-p50-ms")
	b.ReportMetric(Ms(median(final)), "press-to-answer-p50-ms")
	b.Logf("answerCallbackQuery after %v; prompt edited after %v; answer after %v", ack, edited, final)
}

// BenchmarkPeer429: a 429 (retry_after 1) injected on the final answer's
// first sendMessage of each turn. An answer that never arrives is lost.
func BenchmarkPeer429(b *testing.B) {
	r := newPeerRig(b, nil)
	lost := 0
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(3 * time.Second)
		text := fmt.Sprintf("ratelimited %d", i)
		var once sync.Once
		fired := false
		stop := r.tg.FailWhen(func(c telegramtest.Call) bool {
			hit := false
			if c.Method == "sendMessage" && strings.Contains(c.Params["text"], "echo: "+text) {
				once.Do(func() { hit, fired = true, true })
			}
			return hit
		}, telegramtest.Fault{Code: 429, RetryAfter: 1})
		in := r.say(b, text)
		at, ok := r.answered(in.Date, "echo: "+text, time.Minute)
		stop()
		if !ok {
			lost++
			continue
		}
		if !fired {
			b.Logf("turn %d: the 429 was not injected", i)
		}
		lat = append(lat, at.Sub(in.Date))
	}
	b.StopTimer()
	b.ReportMetric(float64(lost), "lost-answers")
	b.ReportMetric(float64(len(r.tg.ViolationsOfRetryAfter())), "retry-after-violations")
	b.ReportMetric(Ms(median(lat)), "answer-with-429-p50-ms")
}

// BenchmarkPeerColdStart: the first message of a brand-new chat (no
// session, CLI started on demand), and a recently active chat's first
// message after a daemon restart, sent once the restarted daemon polls
// ("immediate") and 3 s later (time for the prewarm to finish).
func BenchmarkPeerColdStart(b *testing.B) {
	var cold, immediate, settled []time.Duration
	for i := 0; i < b.N; i++ {
		r := newPeerRig(b, nil)
		in := r.say(b, "first ever")
		at, ok := r.answered(in.Date, "echo: first ever", time.Minute)
		if !ok {
			b.Fatal("no answer to the first message")
		}
		cold = append(cold, at.Sub(in.Date))
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)

		r.restart(b, nil)
		in = r.say(b, "right after restart")
		at, ok = r.answered(in.Date, "echo: right after restart", time.Minute)
		if !ok {
			b.Fatal("no answer after restart")
		}
		immediate = append(immediate, at.Sub(in.Date))
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)

		r.restart(b, nil)
		time.Sleep(3 * time.Second)
		in = r.say(b, "a bit after restart")
		at, ok = r.answered(in.Date, "echo: a bit after restart", time.Minute)
		if !ok {
			b.Fatal("no answer after restart")
		}
		settled = append(settled, at.Sub(in.Date))
		r.d.stop()
	}
	b.ReportMetric(Ms(median(cold)), "cold-first-p50-ms")
	b.ReportMetric(Ms(median(immediate)), "restart-immediate-p50-ms")
	b.ReportMetric(Ms(median(settled)), "restart-after-3s-p50-ms")
	b.Logf("cold %v; right after restart %v; 3 s after restart %v", cold, immediate, settled)
}

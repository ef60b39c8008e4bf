package bridge_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// These tests run the whole daemon stack: go-telegram/bot against the
// in-repo fake Bot API, the bridge, the runner, and the real pinned Claude
// CLI against the in-repo fake Anthropic API.

const (
	alice   = telegramtest.UserID(1001)
	mallory = telegramtest.UserID(6666)
	wait    = 90 * time.Second // bounds a failure, never decides a pass
)

func script() fakeapi.Script {
	var rules []fakeapi.Rule
	rules = append(rules, fakeapi.ToolTurn("BASHRUN", "Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"}, "The command ran.")...)
	// The CLI asks again for a redirect even after "always allow" (the
	// write is checked apart from the command rule), so the always-allow
	// test uses a command its rule fully covers.
	rules = append(rules, fakeapi.ToolTurn("TOUCHONE", "Bash", map[string]any{"command": "touch made.txt", "description": "Write hi"}, "The command ran.")...)
	rules = append(rules, fakeapi.ToolTurn("TOUCHTWO", "Bash", map[string]any{"command": "touch made.txt", "description": "Write hi"}, "The command ran.")...)
	rules = append(rules,
		fakeapi.Rule{Name: "overloaded", When: fakeapi.Match{PromptContains: "OVERLOAD"},
			Replies: []fakeapi.Reply{fakeapi.Error(529)}},
		fakeapi.Rule{Name: "steady", When: fakeapi.Match{PromptContains: "STEADY"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(strings.Repeat("steady words ", 40))}, ChunkDelayMs: 150}}},
		fakeapi.Rule{Name: "slow", When: fakeapi.Match{PromptContains: "SLOW"},
			Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(strings.Repeat("slow answer ", 300))}, ChunkDelayMs: 100}}},
		fakeapi.Rule{Name: "long", When: fakeapi.Match{PromptContains: "LONGANSWER"},
			Replies: []fakeapi.Reply{fakeapi.Text(longAnswer())}},
	)
	rules = append(rules, fakeapi.PlanTurn("PLANIT")...)
	rules = append(rules, fakeapi.AskTurn("ASKME")...)
	return fakeapi.Script{Rules: rules}
}

// longAnswer is a ~12,000-character Markdown answer with code.
func longAnswer() string {
	var b strings.Builder
	for i := 0; b.Len() < 12000; i++ {
		b.WriteString("## Section ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n\nSome prose with <angle> & ampersand, repeated to fill the answer nicely. ")
		b.WriteString(strings.Repeat("Lorem ipsum dolor sit amet. ", 10))
		b.WriteString("\n\n```go\nfunc f() bool { return 1 < 2 && 3 > 2 }\n```\n\n")
	}
	b.WriteString("THE-END")
	return b.String()
}

type rig struct {
	t      *testing.T
	tg     *telegramtest.Server
	claude *claudetest.Env
	dir    string
	store  *state.Store
	b      *bridge.Bridge
	cancel context.CancelFunc
	done   chan error
	ready  chan struct{}
	mutate func(*config.Config)
	logs   *lockedBuffer
	clock  bridge.Clock // nil: the wall clock
	// opened, when set, sees each store start opens before the bridge
	// uses it (to inject faults).
	opened func(*state.Store)
	// ops, when set, runs the HTTP service beside each bridge started
	// (fullstack_ops_test.go).
	ops *opsRig
}

// lockedBuffer collects the logs of every bridge a rig starts (a crashed
// one keeps logging), for the token-redaction check.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type rigOption func(*rig)

func withClaude(opts ...claudetest.Option) rigOption {
	return func(r *rig) { r.claude = claudetest.New(r.t, script(), opts...) }
}

func withConfig(f func(*config.Config)) rigOption { return func(r *rig) { r.mutate = f } }

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{t: t, tg: telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot")),
		dir: t.TempDir(), logs: &lockedBuffer{}}
	for _, o := range opts {
		o(r)
	}
	if r.claude == nil {
		r.claude = claudetest.New(t, script())
	}
	r.tg.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(alice), Type: telegramtest.Private, FirstName: "Alice", Username: "alice"})
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *rig) config() *config.Config {
	c := config.Default()
	c.Telegram.BotToken = config.NewSecret(r.tg.Token())
	c.Telegram.APIURL = r.tg.URL()
	c.Telegram.AllowedUserIDs = []int64{int64(alice)}
	for i := 0; i < 20; i++ {
		c.Telegram.AllowedUserIDs = append(c.Telegram.AllowedUserIDs, int64(2000+i))
	}
	c.Telegram.PollTimeout = config.Duration(2 * time.Second)
	c.Claude.Binary = r.claude.Binary
	c.Claude.Workdir = r.claude.Workdir
	c.Claude.Env = r.claude.Vars
	c.Claude.StopTimeout = config.Duration(5 * time.Second)
	c.Progress.Interval = config.Duration(200 * time.Millisecond)
	c.State.Dir = r.dir
	if r.mutate != nil {
		r.mutate(&c)
	}
	return &c
}

func (r *rig) start() {
	t := r.t
	store, err := state.Open(context.Background(), r.dir)
	require.NoError(t, err)
	r.store = store
	if r.opened != nil {
		r.opened(store)
	}
	cfg := r.config()
	r.ready = make(chan struct{})
	ready := r.ready
	opts := bridge.Options{
		Config: cfg, Store: store, Pool: runner.NewPool(cfg.Claude.MaxLiveProcesses, cfg.Claude.MaxConcurrentSpawns),
		Logger:     zerolog.New(r.logs).With().Timestamp().Logger(),
		InheritEnv: []string{"PATH=" + os.Getenv("PATH")},
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Outbox: outbox.Options{PrivateInterval: 50 * time.Millisecond, PrivateBurst: 5, GroupInterval: 50 * time.Millisecond,
			GroupBurst: 5, GlobalRate: 100, GlobalBurst: 20},
		Ready: func() { close(ready) },
		Clock: r.clock,
	}
	r.ops.wire(&opts) // fullstack_ops_test.go; nothing without ops
	b, err := bridge.New(opts)
	require.NoError(t, err)
	r.b = b
	r.ops.serve(r, b)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan error, 1)
	go func() { r.done <- b.Run(ctx) }()
}

// stop shuts the bridge down gracefully.
func (r *rig) stop() {
	if r.b == nil {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		assert.NoError(r.t, err)
	case <-time.After(wait):
		r.t.Error("bridge did not stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	assert.NoError(r.t, r.b.Shutdown(ctx))
	r.ops.close(r.t)
	assert.NoError(r.t, r.store.Close())
	r.b = nil
	assert.NotContains(r.t, r.logs.String(), r.tg.Token(), "the bot token must never be logged")
}

// crash abandons the bridge as a SIGKILL would.
func (r *rig) crash() {
	r.b.Crash()
	r.cancel()
	<-r.done
	r.ops.close(r.t)
	_ = r.store.Close()
	r.b = nil
}

func (r *rig) say(chat telegramtest.ChatID, user telegramtest.UserID, text string) telegramtest.Message {
	return r.tg.UserSends(chat, telegramtest.User{ID: user, FirstName: "U"}, text)
}

// waitBot waits for a bot message in chat that satisfies pred.
func (r *rig) waitBot(chat telegramtest.ChatID, what string, pred func(telegramtest.Message) bool) telegramtest.Message {
	r.t.Helper()
	return r.tg.WaitForBotMessage(wait, chat, what, pred)
}

func (r *rig) finalAnswer(chat telegramtest.ChatID, to telegramtest.MessageID, contains string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "final answer", func(m telegramtest.Message) bool {
		return m.ReplyTo == to && strings.Contains(m.Text, contains) && answerKeyboard(m) && strings.Contains(m.Text, "⏱")
	})
}

// answerKeyboard reports whether m has no buttons but those an answer
// has (💻 Terminal), which a progress message never has.
func answerKeyboard(m telegramtest.Message) bool {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.Text != "💻 Terminal" {
				return false
			}
		}
	}
	return true
}

func buttonData(m telegramtest.Message, label string) string { return m.ButtonData(label) }

func (r *rig) approvalMessage(chat telegramtest.ChatID, contains string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "approval", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, contains) && buttonData(m, "Deny") != "" ||
			(strings.Contains(m.Text, contains) && !answerKeyboard(m) && buttonData(m, "Cancel") == "")
	})
}

func (r *rig) sessionOf(key state.ChatKey) string {
	c, err := r.store.GetChat(context.Background(), key)
	require.NoError(r.t, err)
	return c.SessionID
}

// drain shuts the bridge down the way SIGTERM does: Shutdown while Run still
// polls, then stop polling.
func (r *rig) drain(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	assert.NoError(r.t, r.b.Shutdown(ctx))
	r.cancel()
	<-r.done
	r.ops.close(r.t)
	assert.NoError(r.t, r.store.Close())
	r.b = nil
}

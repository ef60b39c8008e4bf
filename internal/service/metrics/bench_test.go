package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The per-event cost: what a turn, a Bot API call or an approval adds to
// the daemon's work. Run with go test -bench . -benchmem.

func BenchmarkTurnStarted(b *testing.B) {
	m := newTest()
	for b.Loop() {
		m.TurnStarted("api")
	}
}

func BenchmarkTurnFinished(b *testing.B) {
	m := newTest()
	for b.Loop() {
		m.TurnFinished("api", OutcomeAnswered)
	}
}

func BenchmarkCost(b *testing.B) {
	m := newTest()
	t := Tokens{Input: 1200, Output: 300, CacheRead: 45000, CacheCreation: 800}
	for b.Loop() {
		m.Cost("api", 0.042, t)
	}
}

func BenchmarkAnswerLatency(b *testing.B) {
	m := newTest()
	for b.Loop() {
		m.AnswerLatency(420 * time.Millisecond)
	}
}

func BenchmarkBotAPICall(b *testing.B) {
	m := newTest()
	for b.Loop() {
		m.BotAPICall("editMessageText", 200)
	}
}

func BenchmarkApprovalWait(b *testing.B) {
	m := newTest()
	for b.Loop() {
		m.ApprovalWait(40*time.Second, DecisionApproved)
	}
}

// BenchmarkBotAPICallParallel: every chat's outbox worker counting its
// calls at once.
func BenchmarkBotAPICallParallel(b *testing.B) {
	m := newTest()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.BotAPICall("sendMessage", 200)
		}
	})
}

func BenchmarkNil(b *testing.B) {
	var m *Metrics
	for b.Loop() {
		m.BotAPICall("sendMessage", 200)
	}
}

// BenchmarkScrape: one scrape of a registry holding a busy daemon's
// series (20 projects, every method and outcome), the work a scrape
// interval costs.
func BenchmarkScrape(b *testing.B) {
	m := newTest()
	exerciseAll(m)
	for p := range 20 {
		project := "project" + string(rune('a'+p))
		for _, o := range outcomes {
			m.TurnFinished(project, o)
		}
		m.Cost(project, 1, Tokens{1, 1, 1, 1})
	}
	for _, meth := range []string{"sendMessage", "editMessageText", "deleteMessage", "getUpdates", "answerCallbackQuery", "sendChatAction"} {
		for _, code := range []int{0, 200, 400, 403, 429, 502} {
			m.BotAPICall(meth, code)
		}
	}
	h := m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

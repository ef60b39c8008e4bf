package loadtest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/untether/untether/internal/telegramtest"
)

// longAnswerBytes is the answer of issue 10 §3: rendered in 4 chunks of at
// most 4,000 visible characters.
const longAnswerBytes = 12600

// BenchmarkLongAnswer: a 12.6 kB answer in one private chat, after a turn
// too short for a progress message ("quick") and after a 2 s turn whose
// progress message was edited meanwhile ("after-progress"). Reported: from
// the fake CLI writing `result` to the first and to the last chunk
// reaching the fake Telegram, and the 429s. Turns are 4 s apart, so each
// starts with the chat's window as a human's next message would find it.
func BenchmarkLongAnswer(b *testing.B) {
	for _, sc := range []struct {
		name string
		spec string
	}{
		{"quick", "tools=0"},
		{"after-progress", "tools=20 gap=100ms"},
	} {
		b.Run(sc.name, func(b *testing.B) { runLongAnswer(b, sc.spec) })
	}
}

func runLongAnswer(b *testing.B, spec string) {
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
	c := setupConvs(tg, loadScenario{chats: 1})[0]
	logDir := b.TempDir()
	startDaemon(b, tg, daemonOpts{fakeEnv: map[string]string{EnvStepLog: logDir}})

	var first, complete []time.Duration
	var chunks, lost int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(4 * time.Second)
		tag := fmt.Sprintf("la%d", i)
		in, err := tg.TryUserSends(c.chat, c.user, fmt.Sprintf("LOAD %s %s answer=%d", tag, spec, longAnswerBytes))
		if err != nil {
			b.Fatalf("send: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		sn, err := tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
			for _, call := range sn.Calls {
				if call.Method == "sendMessage" && call.OK() && !call.Time.Before(in.Date) && strings.Contains(call.Params["text"], ResultMarker) {
					return true
				}
			}
			return false
		})
		cancel()
		if err != nil {
			lost++
			continue
		}
		log, err := ReadStepLog(filepath.Join(logDir, tag+".steps"))
		if err != nil {
			b.Fatalf("step log: %v", err)
		}
		var sent []time.Time
		for _, call := range sn.Calls {
			if call.Method != "sendMessage" || !call.OK() || call.Time.Before(log.Result) || call.Chat != c.chat {
				continue
			}
			if len(sent) > 0 || strings.Contains(call.Params["text"], TagPrefix+tag+".") {
				sent = append(sent, call.Time)
			}
			if strings.Contains(call.Params["text"], ResultMarker) {
				break
			}
		}
		chunks += len(sent)
		first = append(first, sent[0].Sub(log.Result))
		complete = append(complete, sent[len(sent)-1].Sub(log.Result))
	}
	b.StopTimer()
	n429 := 0
	for _, call := range tg.Snapshot().Calls {
		if call.Status == 429 {
			n429++
		}
	}
	b.ReportMetric(Ms(Percentile(first, 50)), "first-chunk-p50-ms")
	b.ReportMetric(Ms(Percentile(complete, 50)), "complete-p50-ms")
	b.ReportMetric(Ms(Percentile(complete, 100)), "complete-max-ms")
	b.ReportMetric(float64(chunks)/float64(max(1, b.N-lost)), "chunks/answer")
	b.ReportMetric(float64(n429), "429s")
	b.ReportMetric(float64(lost), "lost-answers")
	b.Logf("first chunk after result: %s; complete: %s; %d 429s", durations(first), durations(complete), n429)
}

package loadtest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/telegramtest"
)

const spawnChats = 30

// BenchmarkRealCLISpawn: 30 private chats send their first message at once;
// every CLI is started through the spawn limiter (default 2 concurrent
// spawns). max_live_processes is raised to 30 so all 30 can be alive
// together (the default, 16, would evict idle ones meanwhile), and
// idle_timeout is set to idleTimeout so the RSS can be read before and
// after idle eviction. RSS is the sum of VmRSS over the CLI processes and
// their descendants (everything below this process except the daemon's own
// threads).
func BenchmarkRealCLISpawn(b *testing.B) {
	const idleTimeout = 60 * time.Second
	for i := 0; i < b.N; i++ {
		tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
		tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
		env := claudetest.New(b, peerScript())
		d := startDaemon(b, tg, daemonOpts{mutate: realCLI(env, func(c *config.Config) {
			c.Claude.MaxLiveProcesses = spawnChats
			c.Claude.IdleTimeout = config.Duration(idleTimeout)
		})})
		before, _ := Descendants(os.Getpid())
		var convs []conv
		for j := 0; j < spawnChats; j++ {
			id := telegramtest.ChatID(20000 + j)
			tg.AddChat(telegramtest.Chat{ID: id, Type: telegramtest.Private, FirstName: fmt.Sprint("S", j)})
			convs = append(convs, conv{chat: id, user: telegramtest.User{ID: telegramtest.UserID(id), FirstName: fmt.Sprint("S", j)}})
		}
		start := time.Now()
		var wg sync.WaitGroup
		sent := make([]telegramtest.Message, spawnChats)
		for j, c := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := tg.TryUserSends(c.chat, c.user, fmt.Sprintf("spawn %d", j))
				if err != nil {
					b.Error(err)
				}
				sent[j] = m
			}()
		}
		wg.Wait()
		lost := awaitEchoes(tg, convs, 5*time.Minute)
		allAnswered := time.Now()
		sn := tg.Snapshot()
		var lat []time.Duration
		var lastFinal time.Time
		for j, c := range convs {
			for _, call := range sn.Calls {
				if call.Method == "sendMessage" && call.OK() && call.Chat == c.chat && strings.Contains(call.Params["text"], fmt.Sprintf("echo: spawn %d", j)) {
					lat = append(lat, call.Time.Sub(sent[j].Date))
					if call.Time.After(lastFinal) {
						lastFinal = call.Time
					}
					break
				}
			}
		}
		pids := newPIDs(before)
		liveRSS := TreeRSS(pids)
		live := d.pool.Live()
		// Idle eviction: the idle_timeout after each chat's answer.
		deadline := time.Now().Add(idleTimeout + time.Minute)
		for d.pool.Live() > 0 && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
		}
		evicted := time.Since(allAnswered)
		time.Sleep(time.Second)
		afterRSS := TreeRSS(newPIDs(before))
		d.stop()

		b.ReportMetric(lastFinal.Sub(start).Seconds(), "all-answered-s")
		b.ReportMetric(Ms(median(lat)), "answer-p50-ms")
		b.ReportMetric(Ms(slices.Max(lat)), "answer-max-ms")
		b.ReportMetric(float64(lost), "lost-answers")
		b.ReportMetric(float64(live), "live-clis")
		b.ReportMetric(float64(len(pids)), "cli-processes")
		b.ReportMetric(float64(liveRSS)/(1<<20), "cli-rss-live-MB")
		b.ReportMetric(float64(liveRSS)/float64(max(live, 1))/(1<<20), "cli-rss-MB/cli")
		b.ReportMetric(float64(afterRSS)/(1<<20), "cli-rss-after-eviction-MB")
		b.ReportMetric(evicted.Seconds(), "evicted-after-s")
		b.Logf("30 chats answered after %v (p50 %v, max %v); %d live CLIs in %d processes hold %d MB RSS; after idle eviction (%v) %d MB",
			lastFinal.Sub(start).Round(time.Millisecond), median(lat), slices.Max(lat), live, len(pids), liveRSS>>20,
			evicted.Round(time.Second), afterRSS>>20)
	}
}

// newPIDs lists this process's descendants that were not in before.
func newPIDs(before []int) []int {
	now, _ := Descendants(os.Getpid())
	var out []int
	for _, p := range now {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}

// awaitEchoes waits until every conversation has its "echo:" answer and
// returns how many are missing at the deadline.
func awaitEchoes(tg *telegramtest.Server, convs []conv, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		sn := tg.Snapshot()
		missing := 0
		for _, c := range convs {
			if !slices.ContainsFunc(sn.BotMessages(c.chat), func(m telegramtest.Message) bool { return strings.Contains(m.Text, "echo: spawn") }) {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(100 * time.Millisecond)
	}
}

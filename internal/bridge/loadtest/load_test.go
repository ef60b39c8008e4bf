package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// conv is one conversation: a private chat, or a topic of a forum.
type conv struct {
	chat   telegramtest.ChatID
	thread telegramtest.ThreadID
	user   telegramtest.User
}

func (c conv) String() string { return fmt.Sprintf("%d/%d", c.chat, c.thread) }

// turnRec is one user message of a load round and what became of it.
type turnRec struct {
	conv conv
	tag  string
	in   telegramtest.Message
	lost bool
}

type loadScenario struct {
	name   string
	chats  int           // private chats
	topics int           // or: topics of one forum supergroup
	gap    time.Duration // pause before each tool event; 0 is full speed
	live   int           // max_live_processes; 0: the default (16)
}

const loadTools = 200

// loadGroup is the forum scenario's supergroup (in allowed_chat_ids).
const loadGroup = -1009000000001

// answerWait bounds the wait for one answer; every round so far finished
// in well under a minute, so an answer missing after this is lost.
const answerWait = 2 * time.Minute

// BenchmarkLoad runs the real bridge against the fake Telegram with its
// flood limits enforced and the daemon's default outbox pacing and progress
// settings. Each conversation sends one message per iteration and waits for
// its answer; the fake CLI streams 200 tool_use/tool_result pairs per turn.
func BenchmarkLoad(b *testing.B) {
	for _, sc := range []loadScenario{
		{name: "private-1", chats: 1},
		{name: "private-10", chats: 10},
		{name: "private-50", chats: 50},
		{name: "private-200", chats: 200},
		{name: "forum-20-topics", topics: 20},
		// The same 200 events spread over 10 s, so progress edits and their
		// staleness are measured while a turn runs, not only at its end.
		{name: "private-10-paced-50ms", chats: 10, gap: 50 * time.Millisecond},
		// 200 chats with a CLI each: no chat waits for a slot, so the
		// Telegram budget goes to progress and answers only (with 16
		// live CLIs, the chats beyond them also get a "waiting for a
		// slot" notice, which becomes their progress message).
		{name: "private-200-all-live", chats: 200, live: 200},
		// 200 chats whose 10 s turns all run at once: every progress
		// message wants refreshing all the time, and the global budget
		// (30 a second) allows each about one refresh every 6.7 s, so
		// staleness shows how fairly the outbox shares it.
		{name: "private-200-paced-50ms-all-live", chats: 200, gap: 50 * time.Millisecond, live: 200},
	} {
		b.Run(sc.name, func(b *testing.B) { runLoad(b, sc) })
	}
}

func setupConvs(tg *telegramtest.Server, sc loadScenario) []conv {
	var convs []conv
	if sc.topics > 0 {
		group := telegramtest.ChatID(loadGroup)
		tg.AddChat(telegramtest.Chat{ID: group, Type: telegramtest.Supergroup, Title: "load", IsForum: true})
		for i := 0; i < sc.topics; i++ {
			u := telegramtest.User{ID: telegramtest.UserID(5000 + i), FirstName: "T" + strconv.Itoa(i)}
			convs = append(convs, conv{chat: group, thread: tg.AddTopic(group), user: u})
		}
		return convs
	}
	for i := 0; i < sc.chats; i++ {
		id := telegramtest.ChatID(10000 + i)
		tg.AddChat(telegramtest.Chat{ID: id, Type: telegramtest.Private, FirstName: "U" + strconv.Itoa(i)})
		convs = append(convs, conv{chat: id, user: telegramtest.User{ID: telegramtest.UserID(id), FirstName: "U" + strconv.Itoa(i)}})
	}
	return convs
}

// round sends one message in every conversation at once and waits for all
// answers (bounded; an answer not seen in time counts as lost).
func round(b *testing.B, d *daemon, convs []conv, iter int) []turnRec {
	recs := make([]turnRec, len(convs))
	var wg sync.WaitGroup
	for i, c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tag := fmt.Sprintf("c%dt%di%d", i, c.thread, iter)
			var opts []telegramtest.UserOption
			if c.thread != 0 {
				opts = append(opts, telegramtest.InTopic(c.thread))
			}
			in, err := d.tg.TryUserSends(c.chat, c.user, "LOAD "+tag, opts...)
			if err != nil {
				b.Errorf("send in %v: %v", c, err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), answerWait)
			defer cancel()
			recs[i] = turnRec{conv: c, tag: tag, in: in, lost: d.watch.wait(ctx, tag) != nil}
		}()
	}
	wg.Wait()
	return recs
}

func runLoad(b *testing.B, sc loadScenario) {
	tg := telegramtest.New(b, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	tg.EnableFloodControl(telegramtest.DefaultFloodLimits())
	convs := setupConvs(tg, sc)
	logDir := b.TempDir()
	dl := newDispatchLog()
	d := startDaemon(b, tg, daemonOpts{fakeEnv: map[string]string{
		EnvStepLog: logDir, EnvTools: strconv.Itoa(loadTools), EnvGap: sc.gap.String()},
		outbox: outbox.Options{Dispatched: dl.record},
		mutate: func(c *config.Config) {
			if sc.live > 0 {
				c.Claude.MaxLiveProcesses = sc.live
			}
		}})

	cpu0, _ := CPUTime()
	start := time.Now()
	var turns []turnRec
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		turns = append(turns, round(b, d, convs, i)...)
	}
	b.StopTimer()
	// Let the tail (progress finalisation edits) reach Telegram, so edits
	// and staleness are complete.
	last := quiet(tg, 5*time.Second, 4*time.Minute)
	cpu1, _ := CPUTime()
	d.stop()

	r := analyse(tg.Snapshot(), turns, logDir, sc.topics > 0, start, dl)
	window := last.Sub(start)
	frames := len(turns) * FramesPerTurn(loadTools)
	b.ReportMetric(float64(r.n429), "429s")
	b.ReportMetric(float64(r.other4xx), "other-4xx")
	b.ReportMetric(float64(r.lost+r.neverSent), "lost-answers")
	b.ReportMetric(float64(r.errorReplies), "error-replies")
	b.ReportMetric(float64(r.behindProgress), "answers-behind-own-progress")
	b.ReportMetric(float64(r.dupFinals), "dup-answers")
	b.ReportMetric(float64(r.edits)/float64(len(convs))/window.Minutes(), "edits/conv/min")
	b.ReportMetric(float64(r.calls)/float64(len(turns)), "calls/turn")
	b.ReportMetric(Ms(Percentile(r.final, 50)), "final-p50-ms")
	b.ReportMetric(Ms(Percentile(r.final, 99)), "final-p99-ms")
	b.ReportMetric(Ms(Percentile(r.finalNoPace, 50)), "final-nopace-p50-ms")
	b.ReportMetric(Ms(Percentile(r.finalNoPace, 99)), "final-nopace-p99-ms")
	b.ReportMetric(Ms(Percentile(r.toOutbox, 50)), "result-to-outbox-p50-ms")
	b.ReportMetric(Ms(Percentile(r.toOutbox, 99)), "result-to-outbox-p99-ms")
	b.ReportMetric(Ms(Percentile(r.inOutbox, 50)), "in-outbox-p50-ms")
	b.ReportMetric(Ms(Percentile(r.inOutbox, 99)), "in-outbox-p99-ms")
	b.ReportMetric(Ms(Percentile(r.transit, 50)), "sent-to-arrival-p50-ms")
	b.ReportMetric(Ms(Percentile(r.transit, 99)), "sent-to-arrival-p99-ms")
	b.ReportMetric(Ms(Percentile(r.stale, 50)), "stale-p50-ms")
	b.ReportMetric(Ms(Percentile(r.stale, 99)), "stale-p99-ms")
	b.ReportMetric(float64(r.staleMissing), "steps-never-shown")
	b.ReportMetric(float64(r.progressMsgs)/float64(len(turns)), "progress-msgs/turn")
	b.ReportMetric(r.lastFinal.Sub(start).Seconds(), "answered-s")
	b.ReportMetric(window.Seconds(), "settled-s")
	b.ReportMetric((cpu1-cpu0).Seconds()/float64(frames)*1000, "cpu-s/1kframes")
	b.Logf("%s: %d turns, %d Bot API calls (%d edits, %d 429s), answers p50 %v p99 %v (pacing excluded p50 %v p99 %v), staleness p50 %v p99 %v, answered in %v, settled in %v",
		sc.name, len(turns), r.calls, r.edits, r.n429, Percentile(r.final, 50), Percentile(r.final, 99),
		Percentile(r.finalNoPace, 50), Percentile(r.finalNoPace, 99), Percentile(r.stale, 50), Percentile(r.stale, 99),
		r.lastFinal.Sub(start).Round(time.Millisecond), window.Round(time.Millisecond))
	b.Logf("%s: calls by method: %v", sc.name, r.byMethod)
	for i, d := range r.rateLimited {
		if i == 5 {
			b.Logf("… %d more 429s", len(r.rateLimited)-5)
			break
		}
		b.Logf("429: %s", d)
	}
	if r.lost+r.neverSent > 0 {
		b.Logf("%d answers lost (%d with an error reply instead); daemon errors:\n%s", r.lost+r.neverSent, r.errorReplies, d.logErrors(10))
	}
}

type loadResult struct {
	calls, edits, n429, other4xx int
	lost, neverSent, dupFinals   int
	errorReplies, behindProgress int
	final, finalNoPace, stale    []time.Duration
	toOutbox, inOutbox, transit  []time.Duration // answers: result → queued in the outbox → sent → arrived
	staleMissing, progressMsgs   int
	lastFinal                    time.Time
	rateLimited                  []string // the 429s, described
	byMethod                     map[string]int
}

// outboxCounted are the methods that take a slot of the outbox's per-chat
// and global windows; typing (sendChatAction) takes neither.
var outboxCounted = map[string]bool{"sendMessage": true, "editMessageText": true, "deleteMessage": true}

type convKey struct {
	chat   telegramtest.ChatID
	thread telegramtest.ThreadID
}

type sentCall struct {
	at    time.Time
	final bool
}

// analyse derives the load figures from the fake Telegram's call log and
// the fake CLI's step logs.
//
// Pacing-excluded latency: the outbox's per-chat and global sliding
// windows (its default sizes; an answer may use every slot) are replayed
// over every call Telegram saw before the answer; the answer's latency
// counts only from when both had a free slot (or from the result, if
// later). Arrival times stand in for the outbox's send times. Time an
// answer spent behind another call of its own conversation that went out
// after the result (a progress edit, say) is pacing by that measure too,
// so those answers are counted separately as behindProgress.
func analyse(sn *telegramtest.Snapshot, turns []turnRec, logDir string, group bool, since time.Time, dl *dispatchLog) loadResult {
	var r loadResult
	interval, burst := outbox.DefaultPrivateInterval, outbox.DefaultPrivateBurst
	if group {
		interval, burst = outbox.DefaultGroupInterval, outbox.DefaultGroupBurst
	}
	global := NewWindow(outbox.DefaultGlobalBurst,
		time.Duration(float64(outbox.DefaultGlobalBurst)/float64(outbox.DefaultGlobalRate)*float64(time.Second)))
	chats := map[telegramtest.ChatID]*Window{}
	threadOf := map[telegramtest.ChatID]map[string]telegramtest.ThreadID{}
	for chat, msgs := range sn.Chats {
		threadOf[chat] = map[string]telegramtest.ThreadID{}
		for _, m := range msgs {
			threadOf[chat][strconv.Itoa(int(m.ID))] = m.Thread
		}
	}
	convOf := func(c telegramtest.Call) convKey {
		if id, ok := c.Params["message_id"]; ok {
			return convKey{c.Chat, threadOf[c.Chat][id]}
		}
		th, _ := strconv.Atoi(c.Params["message_thread_id"])
		return convKey{c.Chat, telegramtest.ThreadID(th)}
	}
	convCalls := map[convKey][]sentCall{}
	recent := map[telegramtest.ChatID][]time.Time{} // for describing 429s
	var recentAll []time.Time
	firstFinal := map[string]telegramtest.Call{}
	type key struct {
		chat telegramtest.ChatID
		msg  string
	}
	renders := map[key][]Visible{}
	for _, c := range sn.Calls {
		if c.Method == "getUpdates" || c.Time.Before(since) {
			continue
		}
		r.calls++
		if r.byMethod == nil {
			r.byMethod = map[string]int{}
		}
		r.byMethod[c.Method]++
		switch {
		case c.Status == 429:
			r.n429++
			n := 0
			for _, t := range recent[c.Chat] {
				if c.Time.Sub(t) < 3*time.Second {
					n++
				}
			}
			all := 0
			for _, t := range recentAll {
				if c.Time.Sub(t) < time.Second {
					all++
				}
			}
			r.rateLimited = append(r.rateLimited, fmt.Sprintf("%s chat %d retry_after %d after %d counted calls of the chat in the last 3 s, %d of all chats in the last 1 s",
				c.Method, c.Chat, c.RetryAfter, n, all))
		case c.Status >= 400 && c.Status < 500:
			r.other4xx++
		}
		if c.Method == "sendMessage" && c.OK() && !strings.Contains(c.Params["text"], ResultMarker) {
			// A progress message's first render: the outbox sends it with
			// the latest content if it was edited while waiting.
			var rp struct {
				MessageID int `json:"message_id"`
			}
			if json.Unmarshal([]byte(c.Params["reply_parameters"]), &rp) == nil && rp.MessageID != 0 {
				k := key{c.Chat, "reply:" + strconv.Itoa(rp.MessageID)}
				renders[k] = append(renders[k], Visible{At: c.Time, Steps: StepsShown(c.Params["text"])})
			}
		}
		if c.Method == "editMessageText" {
			r.edits++
			if c.OK() {
				k := key{c.Chat, c.Params["message_id"]}
				renders[k] = append(renders[k], Visible{At: c.Time, Steps: StepsShown(c.Params["text"])})
			}
		}
		chat := chats[c.Chat]
		if chat == nil {
			chat = NewWindow(burst, time.Duration(burst)*interval)
			chats[c.Chat] = chat
		}
		at, tag, isFinal := ResultAt(c.Params["text"])
		isFinal = isFinal && c.Method == "sendMessage"
		if isFinal && c.OK() {
			if _, seen := firstFinal[tag]; seen {
				r.dupFinals++
			} else {
				firstFinal[tag] = c
				ready := at
				for _, t := range []time.Time{chat.ReadyAt(at, 0), global.ReadyAt(at, 0)} {
					if t.After(ready) {
						ready = t
					}
				}
				r.final = append(r.final, c.Time.Sub(at))
				r.finalNoPace = append(r.finalNoPace, max(0, c.Time.Sub(ready)))
				if bridge, held, sent, ok := dl.split(tag, at); ok {
					r.toOutbox, r.inOutbox = append(r.toOutbox, bridge), append(r.inOutbox, held)
					r.transit = append(r.transit, c.Time.Sub(sent))
				}
				if c.Time.After(r.lastFinal) {
					r.lastFinal = c.Time
				}
				for _, o := range convCalls[convOf(c)] {
					if !o.final && o.at.After(at) {
						r.behindProgress++
						break
					}
				}
			}
		}
		if outboxCounted[c.Method] {
			chat.Take(c.Time)
			global.Take(c.Time)
			k := convOf(c)
			convCalls[k] = append(convCalls[k], sentCall{at: c.Time, final: isFinal})
			if c.Status != 429 {
				recent[c.Chat] = append(recent[c.Chat], c.Time)
				if c.Method != "deleteMessage" { // the fake counts sends and edits only
					recentAll = append(recentAll, c.Time)
				}
			}
		}
	}
	for _, t := range turns {
		if t.lost {
			r.lost++
			for _, m := range sn.Chats[t.conv.chat] {
				if m.FromBot && m.ReplyTo == t.in.ID && strings.HasPrefix(m.Text, "⚠️") {
					r.errorReplies++
					break
				}
			}
			continue
		}
		if _, ok := firstFinal[t.tag]; !ok {
			r.neverSent++
		}
		log, err := ReadStepLog(filepath.Join(logDir, t.tag+".steps"))
		if err != nil {
			r.staleMissing += loadTools
			continue
		}
		progress := telegramtest.MessageID(0)
		for _, m := range sn.Chats[t.conv.chat] {
			if m.FromBot && m.ReplyTo == t.in.ID && !strings.Contains(m.Text, ResultMarker) {
				progress = m.ID
				break
			}
		}
		if progress == 0 {
			continue // the bridge shows no progress message for a short turn
		}
		r.progressMsgs++
		st, missing := Staleness(log, append(renders[key{t.conv.chat, "reply:" + strconv.Itoa(int(t.in.ID))}],
			renders[key{t.conv.chat, strconv.Itoa(int(progress))}]...))
		r.stale = append(r.stale, st...)
		r.staleMissing += missing
	}
	return r
}

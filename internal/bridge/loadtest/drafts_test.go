package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// modelTap sits between the CLI and fakeapi and notes when each streamed
// text delta of a model reply passed it: the model's own timeline, which
// the text the user sees is measured against. The CLI needs a moment more
// to print a delta, so latencies measured from here are slightly pessimistic
// for the bridge.
type modelTap struct {
	upstream string
	srv      *httptest.Server

	mu      sync.Mutex
	streams []*tapStream
}

type tapStream struct {
	request []byte
	deltas  []tapDelta
}

type tapDelta struct {
	at   time.Time
	text string // the reply's text so far
}

func newModelTap(tb testing.TB, upstream string) *modelTap {
	m := &modelTap{upstream: upstream}
	m.srv = httptest.NewServer(m)
	tb.Cleanup(m.srv.Close)
	return m
}

func (m *modelTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, m.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	st := &tapStream{request: body}
	m.mu.Lock()
	m.streams = append(m.streams, st)
	m.mu.Unlock()
	fl, _ := w.(http.Flusher)
	br := bufio.NewReader(resp.Body)
	var text strings.Builder
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			at := time.Now()
			_, _ = w.Write(line)
			if fl != nil {
				fl.Flush()
			}
			if d, ok := textDelta(line); ok {
				text.WriteString(d)
				m.mu.Lock()
				st.deltas = append(st.deltas, tapDelta{at: at, text: text.String()})
				m.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// textDelta decodes an SSE data line carrying a text_delta.
func textDelta(line []byte) (string, bool) {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: "))
	if !ok || !bytes.Contains(data, []byte("text_delta")) {
		return "", false
	}
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &ev) != nil || ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" {
		return "", false
	}
	return ev.Delta.Text, true
}

// reply returns the deltas of the first streamed reply to a request that
// contains marker.
func (m *modelTap) reply(marker string) []tapDelta {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.streams {
		if bytes.Contains(st.request, []byte(marker)) && len(st.deltas) > 0 {
			return slices.Clone(st.deltas)
		}
	}
	return nil
}

// tapped points the daemon's CLI at a modelTap in front of its fakeapi.
func tapped(tb testing.TB, tap **modelTap) func(*config.Config) {
	return func(c *config.Config) {
		env := make(map[string]string, len(c.Claude.Env))
		for k, v := range c.Claude.Env {
			env[k] = v
		}
		*tap = newModelTap(tb, env["ANTHROPIC_BASE_URL"])
		env["ANTHROPIC_BASE_URL"] = (*tap).srv.URL
		c.Claude.Env = env
	}
}

var alphaWord = regexp.MustCompile(`alpha-(\d{4})`)

// lastWord is the number of the last whole "alpha-NNNN" word in s, 0 if
// none.
func lastWord(s string) int {
	n := 0
	for _, m := range alphaWord.FindAllStringSubmatch(s, -1) {
		if v, _ := strconv.Atoi(m[1]); v > n {
			n = v
		}
	}
	return n
}

// streamTurn is what one streamed turn showed, against the model's timeline.
type streamTurn struct {
	firstWords time.Duration   // first model delta → first words visible
	lags       []time.Duration // per word: complete at the model → visible
	answer     time.Duration   // last model delta → the answer
	drafts     int             // accepted sendMessageDraft calls
	edits      int             // accepted editMessageText calls
	errors     int             // 4xx and 429 answers
}

// measureStream relates what reached the fake Telegram for chat after since
// (drafts, the progress message and its edits, the answer) to the model's
// deltas: when was each word the model wrote first visible in the chat?
func measureStream(sn *telegramtest.Snapshot, chat telegramtest.ChatID, since time.Time, deltas []tapDelta) (streamTurn, error) {
	var st streamTurn
	type shown struct {
		at   time.Time
		last int
	}
	var views []shown
	var answerAt time.Time
	for _, c := range sn.Calls {
		if c.Chat != chat || c.Time.Before(since) {
			continue
		}
		if c.Status >= 400 {
			st.errors++
		}
		if !c.OK() {
			continue
		}
		switch c.Method {
		case "sendMessageDraft":
			st.drafts++
		case "editMessageText":
			st.edits++
		case "sendMessage":
			if strings.Contains(c.Params["text"], "⏱") && answerAt.IsZero() {
				answerAt = c.Time
			}
		default:
			continue
		}
		if n := lastWord(c.Params["text"]); n > 0 {
			views = append(views, shown{at: c.Time, last: n})
		}
	}
	if len(deltas) == 0 || len(views) == 0 || answerAt.IsZero() {
		return st, fmt.Errorf("incomplete turn: %d model deltas, %d views, answer %v", len(deltas), len(views), answerAt)
	}
	st.firstWords = max(0, views[0].at.Sub(deltas[0].at))
	st.answer = answerAt.Sub(deltas[len(deltas)-1].at)
	// complete[w] is when the model had written word w whole.
	complete := map[int]time.Time{}
	prev := 0
	for _, d := range deltas {
		for w := prev + 1; w <= lastWord(d.text); w++ {
			complete[w] = d.at
		}
		prev = max(prev, lastWord(d.text))
	}
	for w := 1; w <= prev; w++ {
		i := slices.IndexFunc(views, func(v shown) bool { return v.last >= w })
		if i < 0 {
			return st, fmt.Errorf("word %d never shown", w)
		}
		st.lags = append(st.lags, max(0, views[i].at.Sub(complete[w])))
	}
	return st, nil
}

// BenchmarkDraftStreaming: the 5.5 s streamed answer of
// BenchmarkPeerStreaming (182 words, ~2 kB, in 50 deltas 100 ms apart) with
// the real CLI, in a private chat (drafts) and in a group (progress edits).
// Measured against the model's own stream (modelTap): the first words
// visible after the model's first delta, and for every word how long after
// the model wrote it a call showing it reached the fake Telegram. Default
// config and outbox pacing, flood control on; turns 3 s apart.
func BenchmarkDraftStreaming(b *testing.B) {
	for _, sc := range []struct {
		name  string
		group bool
	}{{"private", false}, {"group", true}} {
		b.Run(sc.name, func(b *testing.B) {
			var tap *modelTap
			r := newPeerRig(b, tapped(b, &tap))
			chat := r.chat
			if sc.group {
				chat = telegramtest.ChatID(loadGroup)
				r.tg.AddChat(telegramtest.Chat{ID: chat, Type: telegramtest.Supergroup, Title: "team"})
			}
			say := func(text string) telegramtest.Message {
				m, err := r.tg.TryUserSends(chat, r.user, text)
				if err != nil {
					b.Fatal(err)
				}
				return m
			}
			answered := func(since time.Time, want string) bool {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_, err := r.tg.Await(ctx, func(sn *telegramtest.Snapshot) bool {
					for _, c := range sn.Calls {
						if c.Method == "sendMessage" && c.OK() && c.Chat == chat && !c.Time.Before(since) &&
							strings.Contains(c.Params["text"], want) && strings.Contains(c.Params["text"], "⏱") {
							return true
						}
					}
					return false
				})
				return err == nil
			}
			in := say("warm up")
			if !answered(in.Date, "echo: warm up") {
				b.Fatal("no answer to the warm-up message")
			}
			var first, maxLag, p50Lag, answer []time.Duration
			var lags []time.Duration
			drafts, edits, errs := 0, 0, 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				time.Sleep(3 * time.Second)
				prompt := fmt.Sprintf("STREAM55 number %d", i)
				in := say(prompt)
				if !answered(in.Date, "alpha-0182") {
					b.Fatal("no streamed answer")
				}
				quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
				st, err := measureStream(r.tg.Snapshot(), chat, in.Date, tap.reply(prompt))
				if err != nil {
					b.Fatalf("turn %d: %v", i, err)
				}
				first = append(first, st.firstWords)
				maxLag = append(maxLag, slices.Max(st.lags))
				p50Lag = append(p50Lag, median(st.lags))
				answer = append(answer, st.answer)
				lags = append(lags, st.lags...)
				drafts, edits, errs = drafts+st.drafts, edits+st.edits, errs+st.errors
			}
			b.StopTimer()
			b.ReportMetric(Ms(median(first)), "first-words-p50-ms")
			b.ReportMetric(Ms(slices.Max(first)), "first-words-max-ms")
			b.ReportMetric(Ms(median(lags)), "lag-p50-ms")
			b.ReportMetric(Ms(Percentile(lags, 95)), "lag-p95-ms")
			b.ReportMetric(Ms(slices.Max(maxLag)), "lag-max-ms")
			b.ReportMetric(Ms(median(answer)), "model-end-to-answer-p50-ms")
			b.ReportMetric(float64(drafts)/float64(b.N), "drafts/turn")
			b.ReportMetric(float64(edits)/float64(b.N), "edits/turn")
			b.ReportMetric(float64(errs), "4xx")
			b.Logf("first words after %v; max lag per turn %v; median lag per turn %v; answer after the model's end %v",
				first, maxLag, p50Lag, answer)
		})
	}
}

func TestMeasureStream(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	deltas := []tapDelta{
		{at: ms(0), text: "alpha-0001 alp"},
		{at: ms(100), text: "alpha-0001 alpha-0002 alpha-0003"},
		{at: ms(200), text: "alpha-0001 alpha-0002 alpha-0003 alpha-0004"},
	}
	call := func(at int, method, text string, status int) telegramtest.Call {
		return telegramtest.Call{Time: ms(at), Method: method, Chat: 5, Status: status, Params: map[string]string{"text": text}}
	}
	sn := &telegramtest.Snapshot{Calls: []telegramtest.Call{
		call(-50, "sendMessage", "alpha-0009 before the turn", 200),
		call(150, "sendMessageDraft", "alpha-0001 alpha-0002", 200),
		call(160, "sendChatAction", "", 200),
		call(250, "sendMessageDraft", "alpha-0001 alpha-0002 alpha-0003 alpha-0004", 429),
		call(400, "editMessageText", "⚙️ Working", 200),
		call(700, "sendMessage", "alpha-0001 alpha-0002 alpha-0003 alpha-0004\n⏱ 1s", 200),
	}}
	st, err := measureStream(sn, 5, ms(-10), deltas)
	if err != nil {
		t.Fatal(err)
	}
	want := streamTurn{firstWords: 150 * time.Millisecond, answer: 500 * time.Millisecond, drafts: 1, edits: 1, errors: 1,
		lags: []time.Duration{150 * time.Millisecond, 50 * time.Millisecond, 600 * time.Millisecond, 500 * time.Millisecond}}
	if fmt.Sprint(st) != fmt.Sprint(want) {
		t.Errorf("measureStream = %+v, want %+v", st, want)
	}
	if _, err := measureStream(sn, 5, ms(-10), nil); err == nil {
		t.Error("a turn without model deltas is not measured")
	}
}

package loadtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// The test binary re-executed with EnvTeeCLI set runs the CLI named there
// and passes its stdin, stdout and stderr through, noting when each stdout
// line passed (EnvTeeLog): the CLI's own timeline, beside the model's
// (modelTap) and Telegram's (the fake's call log).
const (
	EnvTeeCLI = "UNTETHER_LOADTEST_TEE_CLI"
	EnvTeeLog = "UNTETHER_LOADTEST_TEE_LOG"
)

// teeCLIMain runs the real CLI under the tee. Its stdout lines are copied
// as they come, so the bridge sees them with a copy's delay at most.
func teeCLIMain(args []string) int {
	log, err := os.OpenFile(os.Getenv(EnvTeeLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tee:", err)
		return 2
	}
	defer log.Close()
	cmd := exec.Command(os.Getenv(EnvTeeCLI), args...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the tee
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvTeeCLI+"=") && !strings.HasPrefix(kv, EnvTeeLog+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tee:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tee:", err)
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	br := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			at := time.Now()
			_, _ = os.Stdout.Write(line)
			fmt.Fprintf(log, "%d %s\n", at.UnixNano(), frameKind(line))
		}
		if err != nil {
			break
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// frameKind names a CLI stdout frame: its type, subtype, and for a
// stream_event the event's type.
func frameKind(line []byte) string {
	var f struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Event   struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if json.Unmarshal(line, &f) != nil {
		return "?"
	}
	return strings.TrimSpace(strings.Join([]string{f.Type, f.Subtype, f.Event.Type}, " "))
}

// cliFrame is one line of a tee log.
type cliFrame struct {
	at   time.Time
	kind string
}

func readTeeLog(path string) ([]cliFrame, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the tee log: %w", err)
	}
	var fs []cliFrame
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ns, kind, ok := strings.Cut(l, " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			continue
		}
		fs = append(fs, cliFrame{at: time.Unix(0, n), kind: kind})
	}
	return fs, nil
}

// teed runs the daemon's real CLI under the tee, logging to path.
func teed(tb testing.TB, path string) func(*config.Config) {
	return func(c *config.Config) {
		env := make(map[string]string, len(c.Claude.Env)+2)
		for k, v := range c.Claude.Env {
			env[k] = v
		}
		env[EnvTeeCLI], env[EnvTeeLog] = c.Claude.Binary, path
		c.Claude.Env, c.Claude.Binary = env, exe(tb)
	}
}

// answerLog keeps the outbox's dispatches of answers (outbox.Dispatch).
type answerLog struct {
	mu sync.Mutex
	ds []outbox.Dispatch
}

func (l *answerLog) record(d outbox.Dispatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ds = append(l.ds, d)
}

// answer is the first send of an answer containing want since since.
func (l *answerLog) answer(since time.Time, want string) (outbox.Dispatch, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.ds {
		if d.Kind == "send" && d.Tag == "final" && !d.Queued.Before(since) && strings.Contains(d.Text, want) {
			return d, true
		}
	}
	return outbox.Dispatch{}, false
}

// streamEnd is where one streamed answer's time went after the model's last
// word, stage by stage.
type streamEnd struct {
	toStop      time.Duration // last text delta → message_stop (the fake API's trailing events)
	toStreamEnd time.Duration // → the model's HTTP response ended
	toAssistant time.Duration // last text delta → the CLI printed the answer's assistant frame
	toResult    time.Duration // last text delta → the CLI printed result
	toQueued    time.Duration // result → the bridge queued the answer in the outbox
	held        time.Duration // queued → the outbox sent it
	toArrival   time.Duration // sent → it reached the fake Telegram
	toReturn    time.Duration // arrival → the fake answered it
	total       time.Duration // last text delta → the answer's call returned
	draftBusy   bool          // a draft call was still unanswered when the answer was queued
	lowBusy     bool          // a progress call was still unanswered when the answer was queued
}

// measureStreamEnd splits the time from the model's last text delta to the
// answer's sendMessage returning.
func measureStreamEnd(st *tapStream, frames []cliFrame, d outbox.Dispatch, sn *telegramtest.Snapshot, chat telegramtest.ChatID, since time.Time) (streamEnd, error) {
	var e streamEnd
	if st == nil || len(st.deltas) == 0 || st.end.IsZero() {
		return e, errors.New("no complete model stream")
	}
	last := st.deltas[len(st.deltas)-1].at
	stop := slices.IndexFunc(st.events, func(ev tapEvent) bool { return ev.typ == "message_stop" })
	if stop < 0 {
		return e, errors.New("no message_stop")
	}
	var assistant, result time.Time
	for _, f := range frames {
		if f.at.Before(last) {
			continue
		}
		if f.kind == "assistant" && result.IsZero() {
			assistant = f.at
		}
		if strings.HasPrefix(f.kind, "result") && result.IsZero() {
			result = f.at
		}
	}
	if result.IsZero() || assistant.IsZero() {
		return e, fmt.Errorf("no assistant or result frame after the last delta (%d frames)", len(frames))
	}
	var answer telegramtest.Call
	for _, c := range sn.Calls {
		if c.Chat != chat || c.Time.Before(since) || !c.OK() {
			continue
		}
		if c.Method == "sendMessage" && strings.Contains(c.Params["text"], "⏱") {
			answer = c
			break
		}
	}
	if answer.Done.IsZero() {
		return e, errors.New("no answer call")
	}
	for _, c := range sn.Calls {
		if c.Chat != chat || c.Time.Before(since) || c.Time.After(d.Queued) {
			continue
		}
		busy := c.Done.IsZero() || c.Done.After(d.Queued)
		switch {
		case busy && c.Method == "sendMessageDraft":
			e.draftBusy = true
		case busy && (c.Method == "editMessageText" || c.Method == "sendMessage"):
			e.lowBusy = true
		}
	}
	e.toStop = st.events[stop].at.Sub(last)
	e.toStreamEnd = st.end.Sub(last)
	e.toAssistant = assistant.Sub(last)
	e.toResult = result.Sub(last)
	e.toQueued = d.Queued.Sub(result)
	e.held = d.Sent.Sub(d.Queued)
	e.toArrival = answer.Time.Sub(d.Sent)
	e.toReturn = answer.Done.Sub(answer.Time)
	e.total = answer.Done.Sub(last)
	return e, nil
}

// BenchmarkStreamEnd: BenchmarkPeerStreaming's 5.5 s streamed answer in a
// private chat (drafts), with every stage after the model's last word
// timed: the fake API's trailing events and the end of its response
// (modelTap), the CLI's assistant and result frames (the tee), the answer
// queued in the outbox and sent by it (Options.Dispatched), and its call
// arriving at the fake Telegram and returning. Turns 3 s apart after a
// warm-up turn; medians.
func BenchmarkStreamEnd(b *testing.B) {
	var tap *modelTap
	teeLog := b.TempDir() + "/cli.log"
	answers := &answerLog{}
	r := newPeerRigWith(b, func(c *config.Config) {
		tapped(b, &tap)(c)
		teed(b, teeLog)(c)
	}, outbox.Options{Dispatched: answers.record})
	in := r.say(b, "warm up")
	if _, ok := r.answered(in.Date, "echo: warm up", time.Minute); !ok {
		b.Fatal("no answer to the warm-up message")
	}
	var ends []streamEnd
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(3 * time.Second)
		prompt := fmt.Sprintf("STREAM55 number %d", i)
		in := r.say(b, prompt)
		if _, ok := r.answered(in.Date, "alpha-0182", 2*time.Minute); !ok {
			b.Fatal("no streamed answer")
		}
		quiet(r.tg, 1500*time.Millisecond, 30*time.Second)
		frames, err := readTeeLog(teeLog)
		if err != nil {
			b.Fatal(err)
		}
		d, ok := answers.answer(in.Date, "alpha-0182")
		if !ok {
			b.Fatalf("turn %d: the outbox never dispatched the answer", i)
		}
		e, err := measureStreamEnd(tap.stream(prompt), frames, d, r.tg.Snapshot(), r.chat, in.Date)
		if err != nil {
			b.Fatalf("turn %d: %v", i, err)
		}
		b.Logf("turn %d: %+v", i, e)
		ends = append(ends, e)
	}
	b.StopTimer()
	p50 := func(f func(streamEnd) time.Duration) float64 {
		var xs []time.Duration
		for _, e := range ends {
			xs = append(xs, f(e))
		}
		return Ms(median(xs))
	}
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toStop }), "delta-to-message-stop-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toStreamEnd }), "delta-to-stream-end-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toAssistant }), "delta-to-cli-assistant-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toResult }), "delta-to-cli-result-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toQueued }), "result-to-queued-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.held }), "held-in-outbox-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toArrival }), "sent-to-arrival-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.toReturn }), "arrival-to-return-ms")
	b.ReportMetric(p50(func(e streamEnd) time.Duration { return e.total }), "delta-to-answer-returned-ms")
	busy := 0
	for _, e := range ends {
		if e.draftBusy || e.lowBusy {
			busy++
		}
	}
	b.ReportMetric(float64(busy), "answers-queued-behind-a-call")
}

package loadtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

func TestFakeCLIFramesTranslate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvStepLog, dir)
	in := strings.NewReader(`{"type":"user","message":{"role":"user","content":"LOAD t1 tools=3 answer=80"},"uuid":"u-1"}` + "\n" +
		`{"type":"something_new"}` + "\n" +
		`{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}` + "\n")
	var out bytes.Buffer
	const sid = "7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab"
	require.Equal(t, 0, FakeCLIMain([]string{"--session-id=" + sid}, in, &out))

	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, FramesPerTurn(3)+1, "a turn's frames and the control response")
	tr := runner.NewTranslator(0)
	var evs []runner.Event
	for _, l := range lines {
		f, err := runner.DecodeFrame(l)
		require.NoError(t, err, "%s", l)
		evs = tr.Translate(f, evs)
	}
	var started, finished int
	var done *runner.TurnCompleted
	for _, e := range evs {
		switch e := e.(type) {
		case runner.ToolStarted:
			started++
		case runner.ToolFinished:
			finished++
		case runner.TurnCompleted:
			done = &e
		}
	}
	assert.Equal(t, 3, started)
	assert.Equal(t, 3, finished)
	require.NotNil(t, done)
	assert.Equal(t, []runner.MessageUUID{"u-1"}, done.Messages)
	assert.Equal(t, runner.SessionID(sid), done.SessionID)
	assert.InDelta(t, turnCost, done.CostUSD, 1e-9)
	at, tag, ok := ResultAt(done.Answer)
	require.True(t, ok, done.Answer)
	assert.Equal(t, "t1", tag)
	assert.WithinDuration(t, time.Now(), at, time.Minute)

	log, err := ReadStepLog(filepath.Join(dir, "t1.steps"))
	require.NoError(t, err)
	require.Len(t, log.Steps, 3)
	assert.False(t, log.Result.Before(log.Steps[2]))
	assert.Equal(t, at, log.Result)
}

func TestParseSpec(t *testing.T) {
	def := turnSpec{tools: 200, answerBytes: 500}
	s := parseSpec("LOAD abc tools=7 gap=5ms answer=9 junk", def)
	assert.Equal(t, turnSpec{tag: "abc", tools: 7, gap: 5 * time.Millisecond, answerBytes: 9}, s)
	assert.Equal(t, "x", parseSpec("hello", def).tag)
	assert.Equal(t, 200, parseSpec("LOAD t tools=-1", def).tools)
}

func TestPercentile(t *testing.T) {
	xs := []time.Duration{5, 1, 4, 2, 3}
	assert.Equal(t, time.Duration(3), Percentile(xs, 50))
	assert.Equal(t, time.Duration(5), Percentile(xs, 99))
	assert.Equal(t, time.Duration(1), Percentile(xs, 0))
	assert.Equal(t, time.Duration(0), Percentile(nil, 50))
	assert.Equal(t, []time.Duration{5, 1, 4, 2, 3}, xs, "input untouched")
}

func TestStepsShownAndStaleness(t *testing.T) {
	assert.Equal(t, 12, StepsShown("<b>Working</b> · 3s · 12 steps"))
	assert.Equal(t, 1, StepsShown("✅ <b>Done</b> · 1 step · 0.4s"))
	assert.Equal(t, -1, StepsShown("<b>Working</b> · 1s"))

	t0 := time.Unix(100, 0)
	log := StepLog{Steps: []time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond)}}
	renders := []Visible{{At: t0.Add(150 * time.Millisecond), Steps: 2}, {At: t0.Add(time.Second), Steps: 3}}
	st, missing := Staleness(log, renders)
	assert.Equal(t, []time.Duration{150 * time.Millisecond, 50 * time.Millisecond, 800 * time.Millisecond}, st)
	assert.Zero(t, missing)
	_, missing = Staleness(log, renders[:1])
	assert.Equal(t, 1, missing)
}

func TestWindowReadyAt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := NewWindow(3, 3*time.Second)
	assert.Equal(t, t0, w.ReadyAt(t0, 0), "a fresh window is free")
	w.Take(t0)
	w.Take(t0.Add(time.Second))
	assert.Equal(t, t0.Add(time.Second), w.ReadyAt(t0.Add(time.Second), 0), "one slot left")
	assert.Equal(t, t0.Add(3*time.Second), w.ReadyAt(t0.Add(time.Second), 1), "a low op leaves it free")
	w.Take(t0.Add(2 * time.Second))
	assert.Equal(t, t0.Add(3*time.Second), w.ReadyAt(t0.Add(2*time.Second), 0))
	assert.Equal(t, t0.Add(5*time.Second), w.ReadyAt(t0.Add(2*time.Second), 2))
}

func TestProcHelpers(t *testing.T) {
	rss, err := ProcRSS(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, rss)
	cpu, err := ProcCPU(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cpu, time.Duration(0))
	_, err = Descendants(os.Getpid())
	require.NoError(t, err)
}

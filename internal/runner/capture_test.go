package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// A capture drives the real CLI through its raw stdin and stdout, without a
// Session, and records every line in the format of testdata/transcripts
// ({"t","dir","line"}). The conformance test uses it to see exactly what a
// CLI release prints, including frames a Session would fold away.

// envCaptureDir, when set, makes the conformance test write each scenario's
// transcript there as <version>-<scenario>.jsonl, ready to be copied into
// testdata/transcripts as a replay golden.
const envCaptureDir = "UNTETHER_CAPTURE_DIR"

// captureStep is one thing the host does; the next step starts when it is
// answered.
type captureStep struct {
	// prompt is a user message; the step ends with the turn's result.
	prompt string
	// interrupt, with prompt, sends an interrupt once the answer starts
	// (the first stream_event or assistant frame).
	interrupt bool
	// control is a host control request (its "request" object); the step
	// ends with the matching control_response.
	control map[string]any
	// awaitResult, alone, sends nothing and waits for a result: a turn the
	// CLI starts by itself (a background task's notification).
	awaitResult bool
}

// captureScenario is one scripted conversation.
type captureScenario struct {
	name  string
	args  []string // after claudetest.BaseArgs
	opts  []claudetest.Option
	steps []captureStep
	// deny answers can_use_tool with a deny instead of an allow.
	deny bool
	// setup prepares the environment (e.g. settings in Home) before the
	// CLI starts.
	setup func(t *testing.T, env *claudetest.Env)
	// want lists frame families (see lineFamilies) the scenario must show:
	// the frames untether relies on for it.
	want []string
}

// capture is a recorded run.
type capture struct {
	records   []transcriptRecord
	stderr    string
	env       *claudetest.Env
	exitCode  int // -1 when killed
	stepsDone int
	timedOut  bool
}

// outLines returns the CLI's stdout lines.
func (c *capture) outLines() [][]byte {
	var out [][]byte
	for _, r := range c.records {
		if r.Dir == "out" {
			out = append(out, r.Line)
		}
	}
	return out
}

// runCapture runs sc against the real CLI (skipping like every real-CLI test
// when it is not installed) and returns what was written and printed, also
// when the scenario broke off (see check).
func runCapture(t *testing.T, script fakeapi.Script, sc captureScenario) *capture {
	t.Helper()
	env := claudetest.New(t, script, sc.opts...)
	if sc.setup != nil {
		sc.setup(t, env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := env.Command(ctx, sc.args...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())

	c := &capture{env: env}
	start := time.Now()
	record := func(dir string, line []byte) {
		c.records = append(c.records, transcriptRecord{T: time.Since(start).Seconds(), Dir: dir, Line: bytes.Clone(line)})
	}
	write := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		record("in", b)
		_, err = stdin.Write(append(b, '\n'))
		require.NoError(t, err, "write to the CLI's stdin")
	}

	d := captureDriver{sc: sc, write: write, closeStdin: func() { _ = stdin.Close() }}
	write(map[string]any{"type": "control_request", "request_id": "host-init", "request": map[string]any{"subtype": "initialize"}})
	d.startStep()
	sc2 := bufio.NewScanner(stdout)
	sc2.Buffer(make([]byte, 1<<20), 64<<20)
	for sc2.Scan() {
		line := sc2.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if json.Valid(line) {
			record("out", line)
		} else {
			s, _ := json.Marshal(string(line)) // stored as a JSON string, as in the captures
			record("out", s)
		}
		d.react(line)
	}
	_ = cmd.Wait() // a non-zero exit is normal after a failed last turn
	c.exitCode = cmd.ProcessState.ExitCode()
	exit, _ := json.Marshal(map[string]any{"returncode": c.exitCode})
	record("exit", exit)
	c.stderr = stderr.String()
	c.stepsDone = d.step
	c.timedOut = ctx.Err() != nil
	return c
}

// check fails the test unless the scenario ran to its end and the CLI
// exited by itself once stdin closed.
func (c *capture) check(t *testing.T, sc captureScenario) {
	t.Helper()
	require.False(t, c.timedOut, "scenario %s timed out; stderr:\n%s", sc.name, c.stderr)
	require.Equal(t, len(sc.steps), c.stepsDone, "scenario %s stopped after %d of %d steps; stderr:\n%s",
		sc.name, c.stepsDone, len(sc.steps), c.stderr)
	require.GreaterOrEqual(t, c.exitCode, 0, "the CLI exited by itself; stderr:\n%s", c.stderr)
}

// captureDriver plays the host's part: it starts each step and answers what
// the CLI asks.
type captureDriver struct {
	sc          captureScenario
	write       func(any)
	closeStdin  func()
	step        int // index of the running step; len(steps) when done
	interrupted bool
}

func (d *captureDriver) startStep() {
	if d.step >= len(d.sc.steps) {
		d.closeStdin()
		return
	}
	st := d.sc.steps[d.step]
	if st.awaitResult {
		return
	}
	if st.control != nil {
		d.write(map[string]any{"type": "control_request", "request_id": d.controlID(), "request": st.control})
		return
	}
	d.write(map[string]any{"type": "user", "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", d.step+1),
		"message": map[string]any{"role": "user", "content": st.prompt}})
}

func (d *captureDriver) controlID() string { return fmt.Sprintf("host-%d", d.step) }

func (d *captureDriver) next() {
	d.step++
	d.interrupted = false
	d.startStep()
}

// react answers one stdout line.
func (d *captureDriver) react(line []byte) {
	var f struct {
		Type      string          `json:"type"`
		RequestID string          `json:"request_id"`
		Request   json.RawMessage `json:"request"`
		Response  struct {
			RequestID string `json:"request_id"`
		} `json:"response"`
	}
	if json.Unmarshal(line, &f) != nil || d.step >= len(d.sc.steps) {
		return
	}
	st := d.sc.steps[d.step]
	switch {
	case f.Type == "control_request":
		d.answer(f.RequestID, f.Request)
	case st.interrupt && !d.interrupted && (f.Type == "stream_event" || f.Type == "assistant"):
		d.interrupted = true
		d.write(map[string]any{"type": "control_request", "request_id": fmt.Sprintf("host-%d-interrupt", d.step),
			"request": map[string]any{"subtype": "interrupt"}})
	case f.Type == "result" && st.control == nil:
		d.next()
	case f.Type == "control_response" && st.control != nil && f.Response.RequestID == d.controlID():
		d.next()
	}
}

// answer replies to a CLI → host control request: a permission prompt is
// allowed with its input (AskUserQuestion gets its first option as the
// answer) or denied; anything else is refused, as a Session does.
func (d *captureDriver) answer(id string, raw json.RawMessage) {
	var req struct {
		Subtype  string         `json:"subtype"`
		ToolName string         `json:"tool_name"`
		Input    map[string]any `json:"input"`
	}
	_ = json.Unmarshal(raw, &req)
	if req.Subtype != "can_use_tool" {
		d.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error",
			"request_id": id, "error": "unsupported request " + req.Subtype}})
		return
	}
	resp := map[string]any{"behavior": "allow", "updatedInput": req.Input}
	if d.sc.deny {
		resp = map[string]any{"behavior": "deny", "message": "not today"}
	} else if req.ToolName == "AskUserQuestion" {
		resp["updatedInput"] = withFirstAnswers(req.Input)
	}
	d.write(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success",
		"request_id": id, "response": resp}})
}

// withFirstAnswers answers every question of an AskUserQuestion input with
// its first option.
func withFirstAnswers(input map[string]any) map[string]any {
	answers := map[string]string{}
	qs, _ := input["questions"].([]any)
	for _, q := range qs {
		qm, _ := q.(map[string]any)
		opts, _ := qm["options"].([]any)
		text, _ := qm["question"].(string)
		if len(opts) == 0 || text == "" {
			continue
		}
		first, _ := opts[0].(map[string]any)
		label, _ := first["label"].(string)
		answers[text] = label
	}
	out := map[string]any{}
	for k, v := range input {
		out[k] = v
	}
	out["answers"] = answers
	return out
}

// writeCapture stores c as dir/<version>-<name>.jsonl with the test's
// temporary paths and the fake's port replaced, like the shared captures.
func writeCapture(c *capture, dir, version, name string) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<synthetic>" as the CLI printed it
	for _, r := range c.records {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("encode capture record: %w", err)
		}
	}
	s := strings.NewReplacer(
		c.env.Workdir, "/home/dev/project",
		c.env.Home, "/home/dev",
		c.env.API.URL(), "http://127.0.0.1:PORT",
	).Replace(b.String())
	path := filepath.Join(dir, version+"-"+name+".jsonl")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write capture: %w", err)
	}
	return nil
}

package claudetest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/fakeapi"
)

// cliTimeout bounds a whole real-CLI run. Start-up is about a CPU-second, but
// the shared 2-core box may be busy; this is a hang guard, not a measurement.
const cliTimeout = 3 * time.Minute

// lockedBuffer collects stderr, which exec writes from its own goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func newUUID(t *testing.T) string {
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

type frame struct {
	raw  map[string]any
	line string
}

func (f frame) kind() string {
	k, _ := f.raw["type"].(string)
	if st, ok := f.raw["subtype"].(string); ok {
		k += "/" + st
	}
	return k
}

// runOneTurn starts the CLI through env.Command, sends one user message,
// reads frames up to the turn's result, then closes stdin and checks a clean
// exit. It returns the frames seen.
func runOneTurn(t *testing.T, env *Env, prompt string) []frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()

	cmd := env.Command(ctx)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())

	msg, err := json.Marshal(map[string]any{
		"type":    "user",
		"message": map[string]any{"role": "user", "content": prompt},
		"uuid":    newUUID(t),
	})
	require.NoError(t, err)
	_, err = stdin.Write(append(msg, '\n'))
	require.NoError(t, err)

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024) // init frames are large
	var frames []frame
	gotResult := false
	for !gotResult && sc.Scan() {
		var f frame
		f.line = sc.Text()
		require.NoError(t, json.Unmarshal([]byte(f.line), &f.raw), "stdout line is not JSON: %s", f.line)
		frames = append(frames, f)
		gotResult = f.raw["type"] == "result"
	}
	require.NoError(t, stdin.Close())
	// Drain whatever follows the result so Wait can finish.
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	require.True(t, gotResult, "no result frame (scan error %v, exit %v); stderr:\n%s", sc.Err(), waitErr, stderr.String())
	require.NoError(t, waitErr, "CLI exit; stderr:\n%s", stderr.String())
	assert.Equal(t, 0, cmd.ProcessState.ExitCode())
	assert.Empty(t, stderr.String(), "nothing on stderr on a normal run")
	return frames
}

func find(frames []frame, kind string) (frame, bool) {
	for _, f := range frames {
		if f.kind() == kind {
			return f, true
		}
	}
	return frame{}, false
}

// TestRealCLIOneTurn proves the offline plumbing: the real CLI, started only
// through Command, answers from the fake API on loopback.
func TestRealCLIOneTurn(t *testing.T) {
	const answer = "Hello from the fake API."
	env := New(t, fakeapi.Script{Rules: []fakeapi.Rule{{
		Name: "greet", When: fakeapi.Match{PromptContains: "hi"}, Replies: []fakeapi.Reply{fakeapi.Text(answer)},
	}}})

	frames := runOneTurn(t, env, "hi")

	init, ok := find(frames, "system/init")
	require.True(t, ok, "no system/init frame")
	assert.Equal(t, WantVersion(), init.raw["claude_code_version"], "the CLI version asked for ran")
	assert.Equal(t, env.Workdir, init.raw["cwd"], "the CLI ran in Workdir")
	assert.Equal(t, "ANTHROPIC_API_KEY", init.raw["apiKeySource"])

	assistant, ok := find(frames, "assistant")
	require.True(t, ok, "no assistant frame")
	assert.Contains(t, assistant.line, answer)

	result, ok := find(frames, "result/success")
	require.True(t, ok, "no successful result; frames: %v", frames)
	assert.Equal(t, false, result.raw["is_error"])
	assert.Equal(t, answer, result.raw["result"])
	assert.NotEmpty(t, result.raw["session_id"])

	calls := env.API.ModelCalls()
	require.NotEmpty(t, calls)
	c := calls[0]
	assert.Equal(t, "greet", c.Rule)
	assert.Equal(t, "hi", c.LastPrompt())
	assert.Equal(t, "test", c.Header.Get("X-Api-Key"))
	assert.Contains(t, c.Header.Get("User-Agent"), "claude-cli/"+WantVersion())
	assert.Contains(t, string(c.Body), "Primary working directory: "+env.Workdir, "{{cwd}} captures this")
	// With the offline env the CLI calls nothing but the model: no
	// /api/hello preflight (which it sends when nonessential traffic is on).
	for _, r := range env.API.Requests() {
		assert.True(t, r.IsModelCall(), "unexpected request %s %s (%s)", r.Method, r.Path, r.Rule)
	}
}

// TestRealCLIOAuth checks WithOAuthToken reaches the CLI (it authenticates
// with a bearer token instead of the API key), and that the fake's built-in
// {{cwd}} capture finds the working directory in a real request.
func TestRealCLIOAuth(t *testing.T) {
	env := New(t, fakeapi.Script{Default: &fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("working in {{cwd}}")}}},
		WithOAuthToken("sk-ant-oat01-fake"))

	frames := runOneTurn(t, env, "oauth check")

	result, ok := find(frames, "result/success")
	require.True(t, ok, "no successful result")
	assert.Equal(t, "working in "+env.Workdir, result.raw["result"])
	calls := env.API.ModelCalls()
	require.NotEmpty(t, calls)
	assert.Equal(t, "Bearer sk-ant-oat01-fake", calls[0].Header.Get("Authorization"))
	assert.Empty(t, calls[0].Header.Get("X-Api-Key"))
}

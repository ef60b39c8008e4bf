package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// cliTimeout bounds a whole real-CLI run: a hang guard, not a measurement.
const cliTimeout = 3 * time.Minute

// streamCLI is the real CLI in stream-json mode, as untether runs it.
type streamCLI struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	leaf  string // the uuid of the last main assistant message it printed
}

func startStream(t *testing.T, ctx context.Context, env *claudetest.Env, args ...string) *streamCLI {
	t.Helper()
	cmd := env.Command(ctx, args...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &streamCLI{cmd: cmd, stdin: stdin, out: sc}
}

// turn sends one prompt with uuid and reads up to its result; it returns
// the session id.
func (c *streamCLI) turn(t *testing.T, uuid, prompt string) string {
	t.Helper()
	c.send(t, uuid, prompt)
	return c.result(t, prompt)
}

// send sends one prompt with uuid, without waiting for its turn.
func (c *streamCLI) send(t *testing.T, uuid, prompt string) {
	t.Helper()
	msg, err := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "message": map[string]any{"role": "user", "content": prompt}})
	require.NoError(t, err)
	_, err = c.stdin.Write(append(msg, '\n'))
	require.NoError(t, err)
}

// result reads up to the result of prompt's turn; it returns the session id.
func (c *streamCLI) result(t *testing.T, prompt string) string {
	t.Helper()
	for c.out.Scan() {
		var f struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
			IsError   bool   `json:"is_error"`
			UUID      string `json:"uuid"`
			Parent    any    `json:"parent_tool_use_id"`
		}
		if json.Unmarshal(c.out.Bytes(), &f) == nil && f.Type == "assistant" && f.Parent == nil {
			c.leaf = f.UUID // as untether's runner reports it (TurnCompleted.Leaf)
		}
		if f.Type == "result" {
			require.False(t, f.IsError, "turn %q failed: %s", prompt, c.out.Text())
			return f.SessionID
		}
	}
	t.Fatalf("no result for %q: %v", prompt, c.out.Err())
	return ""
}

func (c *streamCLI) close(t *testing.T) {
	t.Helper()
	require.NoError(t, c.stdin.Close())
	for c.out.Scan() {
	}
	require.NoError(t, c.cmd.Wait())
}

// phoneTurn starts the real CLI as untether runs it and has it answer one
// prompt with uuid own: it returns the CLI, the session id, the session's
// transcript and its mark after that turn.
func phoneTurn(t *testing.T, ctx context.Context, env *claudetest.Env, own string) (*streamCLI, string, string, Mark) {
	t.Helper()
	cli := startStream(t, ctx, env)
	id := cli.turn(t, own, "from the phone")
	path, err := Path(env.Home, env.Workdir, SessionID(id))
	require.NoError(t, err)
	m, err := Stamp(path)
	require.NoError(t, err)
	return cli, id, path, m
}

// printMode runs `claude -p --resume id "prompt"` as a person at a terminal
// would (text in and out; the later flags override claudetest's stream-json
// ones), in dir when it is not "".
func printMode(t *testing.T, ctx context.Context, env *claudetest.Env, dir, prompt string, args ...string) string {
	t.Helper()
	cmd := env.Command(ctx, append(append([]string{"--input-format", "text", "--output-format", "text"}, args...), prompt)...)
	if dir != "" {
		cmd.Dir = dir
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "claude -p: %s", out)
	return string(out)
}

func toolScript() fakeapi.Script {
	yes, no := fakeapi.Bool(true), fakeapi.Bool(false)
	return fakeapi.Script{Rules: []fakeapi.Rule{
		{Name: "after-tool", When: fakeapi.Match{AnyUserContains: "please run it", LastIsToolResult: yes},
			Replies: []fakeapi.Reply{fakeapi.Text("The command ran.")}},
		{Name: "tool", When: fakeapi.Match{PromptContains: "please run it", LastIsToolResult: no},
			Replies: []fakeapi.Reply{fakeapi.Blocks(
				fakeapi.ThinkingBlock("private reasoning that no export shows"),
				fakeapi.TextBlock("Running it."),
				fakeapi.ToolUseBlock("Bash", map[string]any{"command": "echo hi > out.txt", "description": "Write hi"}))}},
	}, Default: &fakeapi.Reply{EchoUser: true}}
}

// TestRealCLITranscript runs the real CLI as untether does (stream-json, two
// turns, one with a tool call), then as a person at a terminal would
// (`claude -p --resume`), and reads what the CLI wrote with this package:
// the path, the marks, the person's turn, the listing and the export.
func TestRealCLITranscript(t *testing.T) {
	env := claudetest.New(t, toolScript())
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()

	const own1, own2 = "0b5c8b7e-1111-4000-8000-000000000001", "0b5c8b7e-1111-4000-8000-000000000002"
	cli := startStream(t, ctx, env, "--allowedTools", "Bash")
	id := cli.turn(t, own1, "please run it")
	path, err := Path(env.Home, env.Workdir, SessionID(id))
	require.NoError(t, err)
	m1, err := Stamp(path)
	require.NoError(t, err, "the CLI wrote its transcript where Path says")
	require.Equal(t, id, cli.turn(t, own2, "second turn"))
	d, m2, err := Since(path, m1)
	require.NoError(t, err)
	require.Len(t, d.Turns, 1)
	assert.Equal(t, Turn{UUID: own2, Time: d.Turns[0].Time, Kind: KindPrompt, Text: "second turn", Entrypoint: EntrypointPrint}, d.Turns[0],
		"the uuid untether sends is the entry's uuid")
	cli.close(t)

	// What the CLI writes after its last result and at exit is no turn.
	d, m2, err = Since(path, m2)
	require.NoError(t, err)
	assert.False(t, d.Extended(), "%+v", d)

	printMode(t, ctx, env, "", "typed at the terminal", "--resume", id)
	d, _, err = Since(path, m2)
	require.NoError(t, err)
	assert.Equal(t, []string{"typed at the terminal"}, texts(d.Turns))
	assert.Equal(t, EntrypointPrint, d.Turns[0].Entrypoint, "claude -p looks like untether's own runs")
	assert.True(t, d.Extended())

	list, err := List(env.Home, env.Workdir, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	s := list[0]
	assert.Equal(t, SessionID(id), s.ID)
	assert.Equal(t, "please run it", s.FirstPrompt)
	assert.Equal(t, own1, s.FirstPromptUUID)
	assert.Equal(t, 3, s.Turns)
	assert.True(t, s.TurnsExact)
	assert.Equal(t, env.Workdir, s.CWD)
	assert.Equal(t, claudetest.WantVersion(), s.Version)
	assert.False(t, s.StartedAtTerminal())

	md, err := Export(path, ExportOptions{})
	require.NoError(t, err)
	for _, want := range []string{
		"> please run it", "Running it.", "- **Bash** `echo hi > out.txt`", "The command ran.",
		"> second turn", "echo: second turn", "> typed at the terminal", "echo: typed at the terminal",
		"- Turns: 3", "- Cost: $",
	} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "private reasoning")
	if t.Failed() {
		raw, _ := os.ReadFile(path)
		t.Logf("export:\n%s\ntranscript:\n%s", md, raw)
	}
}

// TestRealCLIProjectDirs: the real CLI keeps each working directory's
// sessions where Dir says, for the awkward paths: long (cut and hashed),
// non-ASCII, dots, a worktree-style .worktrees/x, and a symlinked cwd.
func TestRealCLIProjectDirs(t *testing.T) {
	env := claudetest.New(t, fakeapi.Script{Default: &fakeapi.Reply{EchoUser: true}})
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	long := filepath.Join(env.Workdir, strings.Repeat("a", 120), strings.Repeat("b", 100), "c.d_e")
	link := filepath.Join(env.Workdir, "link")
	require.NoError(t, os.Symlink(env.Workdir, link))
	// Long and non-ASCII: the hash is over UTF-16 units, 😀 being two.
	longUnicode := filepath.Join(env.Workdir, strings.Repeat("ü", 100), strings.Repeat("😀", 50))
	dirs := []string{
		long,
		longUnicode,
		filepath.Join(env.Workdir, "Ünïcode ü", "日本😀"),
		filepath.Join(env.Workdir, "dots.and_under-score"),
		filepath.Join(env.Workdir, "repo", ".worktrees", "x"),
		link,
	}
	for i, dir := range dirs {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		prompt := fmt.Sprintf("where am I %d", i)
		out := printMode(t, ctx, env, dir, prompt)
		assert.Contains(t, out, "echo: "+prompt)
		found := false
		list, err := List(env.Home, dir, 0)
		require.NoError(t, err)
		for _, s := range list {
			found = found || s.FirstPrompt == prompt
		}
		assert.True(t, found, "%s: no session in %s; the CLI made %v", dir, Dir(env.Home, dir), projectDirs(t, env.Home))
	}
	assert.Greater(t, len(ProjectName(long)), maxName, "the long path was cut")
	assert.Greater(t, len(ProjectName(longUnicode)), maxName)
}

// TestRealCLIWorktree: a git worktree's sessions are its own, apart from
// the main checkout's, and record the worktree's branch.
func TestRealCLIWorktree(t *testing.T) {
	env := claudetest.New(t, fakeapi.Script{Default: &fakeapi.Reply{EchoUser: true}})
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	repo := filepath.Join(env.Workdir, "repo")
	wt := filepath.Join(repo, ".worktrees", "feat")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"},
		{"worktree", "add", "-q", "-b", "feat", wt},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	printMode(t, ctx, env, repo, "in the main checkout")
	printMode(t, ctx, env, wt, "in the worktree")

	main, err := List(env.Home, repo, 0)
	require.NoError(t, err)
	require.Len(t, main, 1)
	assert.Equal(t, "in the main checkout", main[0].FirstPrompt)
	assert.Equal(t, "main", main[0].Branch)
	feat, err := List(env.Home, wt, 0)
	require.NoError(t, err)
	require.Len(t, feat, 1)
	assert.Equal(t, "in the worktree", feat[0].FirstPrompt)
	assert.Equal(t, "feat", feat[0].Branch)
	assert.Equal(t, wt, feat[0].CWD)
}

func projectDirs(t *testing.T, home string) []string {
	ents, err := os.ReadDir(filepath.Join(home, ".claude", "projects"))
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestRealCLIForeignWhileLive is issue 26 §3's hard case on the real CLI: a
// person's `claude -p --resume` adds a turn while untether's CLI of the
// same session is still running (idle), and untether's next turn is
// written after it. Since from untether's mark sees both turns; Foreign,
// told untether's own uuids, only the person's. The live CLI's next
// request does not carry the person's turn: it keeps its own history in
// memory, so only a new process (--resume) would.
func TestRealCLIForeignWhileLive(t *testing.T) {
	env := claudetest.New(t, fakeapi.Script{Default: &fakeapi.Reply{EchoUser: true}})
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	const own1, own2 = "0b5c8b7e-2222-4000-8000-000000000001", "0b5c8b7e-2222-4000-8000-000000000002"
	own := func(uuid string) bool { return uuid == own1 || uuid == own2 }
	cli, id, path, m := phoneTurn(t, ctx, env, own1)

	printMode(t, ctx, env, "", "typed at the terminal meanwhile", "--resume", id)
	require.Equal(t, id, cli.turn(t, own2, "the phone again"))
	calls := env.API.ModelCalls()
	assert.False(t, calls[len(calls)-1].AnyUserContains("typed at the terminal meanwhile"),
		"the live CLI did not read what the terminal added")
	cli.close(t)

	d, _, err := Since(path, m)
	require.NoError(t, err)
	assert.Equal(t, []string{"typed at the terminal meanwhile", "the phone again"}, texts(d.Turns))
	foreign, n := d.Foreign(own)
	assert.Equal(t, 1, n)
	assert.Equal(t, []string{"typed at the terminal meanwhile"}, texts(foreign))
	assert.Equal(t, EntrypointPrint, foreign[0].Entrypoint)
	if t.Failed() {
		raw, _ := os.ReadFile(path)
		t.Logf("transcript:\n%s", raw)
	}
}

// TestRealCLIForkWhileBusy: a person's `claude -p --resume` adds a turn
// while untether's CLI of the session is busy with one. The person's CLI
// answers the dangling prompt itself and goes on after it; untether's
// answer, written last, follows its own prompt: the session forks, and a
// later resume goes on from untether's answer, without the person's turn.
// Since says so: the turn is Forked, off the line a resume sends.
func TestRealCLIForkWhileBusy(t *testing.T) {
	env := claudetest.New(t, fakeapi.Script{Rules: []fakeapi.Rule{{Name: "steady", When: fakeapi.Match{PromptContains: "STEADY"},
		Replies: []fakeapi.Reply{{Content: []fakeapi.Block{fakeapi.TextBlock(strings.Repeat("steady words ", 40))}, ChunkDelayMs: 150}}}},
		Default: &fakeapi.Reply{EchoUser: true}})
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	const own1, own2 = "0b5c8b7e-3333-4000-8000-000000000001", "0b5c8b7e-3333-4000-8000-000000000002"
	own := func(uuid string) bool { return uuid == own1 || uuid == own2 }
	cli, id, path, m := phoneTurn(t, ctx, env, own1)

	cli.send(t, own2, "STEADY the phone again")
	require.Eventually(t, func() bool { return len(env.API.ModelCalls()) == 2 }, cliTimeout, 10*time.Millisecond, "the phone's turn is running")
	printMode(t, ctx, env, "", "typed at the terminal meanwhile", "--resume", id)
	require.Equal(t, id, cli.result(t, "STEADY the phone again"))
	cli.close(t) // it names its answer as the session's leaf when it exits

	d, _, err := Since(path, m)
	require.NoError(t, err)
	foreign, n := d.Foreign(own)
	require.Equal(t, 1, n)
	assert.Equal(t, "typed at the terminal meanwhile", foreign[0].Text)
	assert.True(t, foreign[0].Forked, "off the line a resume goes on from")
	on, off := d.ForeignLine(own, "")
	assert.Equal(t, []int{0, 1}, []int{on, off})
	assert.Contains(t, d.line.nodes, cli.leaf, "the uuid the CLI printed for its answer is the answer's entry's")
	on, off = d.ForeignLine(own, cli.leaf)
	assert.Equal(t, []int{0, 1}, []int{on, off}, "its answer is a leaf")

	printMode(t, ctx, env, "", "resumed later", "--resume", id)
	calls := env.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.True(t, last.AnyUserContains("STEADY the phone again"), "the resume went on from the phone's branch")
	assert.False(t, last.AnyUserContains("typed at the terminal meanwhile"), "without the terminal's turn")
	if t.Failed() {
		raw, _ := os.ReadFile(path)
		t.Logf("transcript:\n%s", raw)
	}
}

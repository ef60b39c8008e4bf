package handoff

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/transcript"
)

// screen collects what a program writes to its terminal, without escape
// sequences and white space (the interface moves the cursor instead of
// writing spaces), for waiting on what it shows.
type screen struct {
	mu   sync.Mutex
	text strings.Builder
}

var (
	escapes = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]`)
	blanks  = regexp.MustCompile(`\s+`)
)

func (s *screen) read(r io.Reader) {
	b := make([]byte, 64<<10)
	for {
		n, err := r.Read(b)
		s.mu.Lock()
		s.text.Write(b[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// shows reports whether the screen has shown text (compared without white
// space).
func (s *screen) shows(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := blanks.ReplaceAllString(escapes.ReplaceAllString(s.text.String(), ""), "")
	return strings.Contains(seen, blanks.ReplaceAllString(text, ""))
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return escapes.ReplaceAllString(s.text.String(), "")
}

// setUp writes into home/.claude.json what a person's claude has after its
// first run there: onboarding done, the API key accepted, the directory
// trusted. Without it the interface asks about each first.
func setUp(t *testing.T, home, dir string) {
	t.Helper()
	p := filepath.Join(home, ".claude.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(p); err == nil {
		require.NoError(t, json.Unmarshal(b, &cfg))
	} else {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	cfg["hasCompletedOnboarding"] = true
	cfg["theme"] = "dark"
	// The CLI keeps the last 20 characters of an accepted key: claudetest's is "test".
	cfg["customApiKeyResponses"] = map[string]any{"approved": []string{"test"}, "rejected": []string{}}
	projects, _ := cfg["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	project, _ := projects[dir].(map[string]any)
	if project == nil {
		project = map[string]any{}
	}
	project["hasTrustDialogAccepted"] = true
	projects[dir] = project
	cfg["projects"] = projects
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o600))
}

// TestRealCLIResumeLineInTerminal is what a person does: paste the line
// into a terminal, where the CLI's interface opens on the phone's
// conversation, type a prompt, and leave with /exit. The phone's next turn
// carries that turn. The interface reaches past the offline env, so this
// runs in a loopback-only network namespace.
func TestRealCLIResumeLineInTerminal(t *testing.T) {
	if !claudetest.LoopbackOnly(t) {
		return
	}
	r := phoneStarts(t, awkwardDir)
	setUp(t, r.env.Home, r.env.Workdir)
	daemon, owner, err := LocalAccounts(r.env.Workdir)
	require.NoError(t, err)
	line, err := Resume{ID: r.id, Dir: r.env.Workdir, Home: r.env.Home, Daemon: daemon, Owner: owner}.Line()
	require.NoError(t, err)
	t.Logf("line: %s", line)

	cmd := exec.CommandContext(r.ctx, "sh", "-c", line)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + r.env.PersonPATH() + ":" + os.Getenv("PATH"), "TERM=xterm-256color"}
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	require.NoError(t, err)
	var sc screen
	go sc.read(term)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = term.Close()
		if t.Failed() {
			t.Logf("screen:\n%s", sc.String())
		}
	})
	wait := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, time.Minute, 20*time.Millisecond, "waiting for %s", what)
	}

	wait("the phone's conversation on screen", func() bool { return sc.shows("echo: REMEMBER mango") })
	const prompt = "typed in a terminal"
	_, err = term.Write([]byte(prompt))
	require.NoError(t, err)
	wait("the prompt typed", func() bool { return sc.shows(prompt) })
	_, err = term.Write([]byte("\r"))
	require.NoError(t, err)
	wait("the answer on screen", func() bool { return sc.shows("echo: " + prompt) })
	_, err = term.Write([]byte("/exit"))
	require.NoError(t, err)
	wait("/exit typed", func() bool { return sc.shows("/exit") })
	_, err = term.Write([]byte("\r"))
	require.NoError(t, err)
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		var exit *exec.ExitError
		require.False(t, errors.As(err, &exit) && exit.ExitCode() != 0, "the CLI left with /exit: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the CLI did not leave on /exit")
	}

	r.terminalTurnSeen(t, prompt, transcript.EntrypointTerminal)
}

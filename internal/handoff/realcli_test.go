package handoff

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/runner/sshtest"
	"github.com/untether/untether/internal/transcript"
)

// cliTimeout bounds a whole real-CLI test: a hang guard, not a measurement.
const cliTimeout = 3 * time.Minute

// awkwardDir is a project directory name every quoting rule meets: a
// quote, a space, $, a backslash, double quotes, ! and non-ASCII.
const awkwardDir = `it's a "$HOME" \ !x ünï 日本`

// round is one hand-over: a session the phone (stream-json, as untether
// runs the CLI) started in an awkward directory, and the mark untether
// keeps of its transcript.
type round struct {
	env  *claudetest.Env
	ctx  context.Context
	id   runner.SessionID
	path string
	mark transcript.Mark
}

// phoneStarts makes the round's session in a directory called name: one
// phone turn that asks the model to remember a word.
func phoneStarts(t *testing.T, name string) *round {
	t.Helper()
	env := claudetest.New(t, fakeapi.Script{Default: &fakeapi.Reply{EchoUser: true}})
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	t.Cleanup(cancel)
	env.Workdir = filepath.Join(env.Workdir, name)
	require.NoError(t, os.Mkdir(env.Workdir, 0o755))
	id, err := env.Converse(ctx, "REMEMBER mango")
	require.NoError(t, err)
	sid, err := runner.ParseSessionID(id)
	require.NoError(t, err)
	path, err := transcript.Path(env.Home, env.Workdir, transcript.SessionID(id))
	require.NoError(t, err)
	mark, err := transcript.Stamp(path)
	require.NoError(t, err, "the phone's turn is in the transcript")
	return &round{env: env, ctx: ctx, id: sid, path: path, mark: mark}
}

// runAsPrinted runs line with sh -c exactly as it is, from another
// directory, as a person whose HOME is another directory and whose PATH
// starts with claudetest's person's claude, typing prompt on stdin: with
// no terminal the CLI reads its prompt from stdin and answers in print
// mode, the one way to add a turn to the line without changing it.
func (r *round) runAsPrinted(t *testing.T, line, prompt string) string {
	t.Helper()
	cmd := exec.CommandContext(r.ctx, "sh", "-c", line)
	cmd.Dir = t.TempDir()
	person := t.TempDir()
	cmd.Env = []string{"HOME=" + person, "PATH=" + r.env.PersonPATH() + ":" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(prompt)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "sh -c %s: %s", line, stderr.String())
	_, err = os.Stat(filepath.Join(person, ".claude", "projects"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the CLI kept nothing in the person's own HOME: the line set the session's")
	return string(out)
}

// terminalTurnSeen checks that the line's run added prompt to the
// session's transcript (from entrypoint), that the model was sent the phone's earlier turn
// and ran in the session's directory, and that the phone's next turn
// (--resume, as untether resumes) sends the terminal's turn along.
func (r *round) terminalTurnSeen(t *testing.T, prompt, entrypoint string) {
	t.Helper()
	d, _, err := transcript.Since(r.path, r.mark)
	require.NoError(t, err)
	require.Len(t, d.Turns, 1, "%+v", d)
	assert.Equal(t, prompt, d.Turns[0].Text)
	assert.Equal(t, entrypoint, d.Turns[0].Entrypoint)
	foreign, n := d.Foreign(func(string) bool { return false })
	assert.Equal(t, 1, n)
	assert.Equal(t, d.Turns, foreign)

	calls := r.env.API.ModelCalls()
	last := calls[len(calls)-1]
	assert.Equal(t, prompt, last.LastPrompt())
	assert.True(t, last.AnyUserContains("REMEMBER mango"), "the terminal's turn carried the phone's conversation")
	assert.True(t, sentWorkdir(last, r.env.Workdir), "the line's cd landed in the session's directory")

	_, err = r.env.Converse(r.ctx, "back on the phone", "--resume", string(r.id))
	require.NoError(t, err)
	calls = r.env.API.ModelCalls()
	last = calls[len(calls)-1]
	assert.Equal(t, "back on the phone", last.LastPrompt())
	assert.True(t, last.AnyUserContains(prompt), "the phone's next turn sent the terminal's turn to the model")
}

// sentWorkdir reports whether the CLI told the model that dir is its
// working directory (it does in an environment message).
func sentWorkdir(call fakeapi.Request, dir string) bool {
	for _, m := range call.Messages() {
		if strings.Contains(m.Content.Text(), "Primary working directory: "+dir+"\n") {
			return true
		}
	}
	return false
}

// TestRealCLIResumeLineLocal: the line for a session on this machine, run
// as printed in a shell, resumes the phone's session there and adds a
// turn, which the phone's next turn carries.
func TestRealCLIResumeLineLocal(t *testing.T) {
	r := phoneStarts(t, awkwardDir)
	daemon, owner, err := LocalAccounts(r.env.Workdir)
	require.NoError(t, err)
	require.Nil(t, SwitchTo(daemon, owner), "the test runs as a person's account (or root) owning its directories: %+v", daemon)
	line, err := Resume{ID: r.id, Dir: r.env.Workdir, Home: r.env.Home, Daemon: daemon, Owner: owner}.Line()
	require.NoError(t, err)
	t.Logf("line: %s", line)
	require.True(t, strings.HasPrefix(line, "cd '"), line)
	require.Contains(t, line, " && env HOME=", "claudetest's HOME is not the account's: the line sets it")

	const prompt = "what did I ask you to remember? (typed at the terminal)"
	assert.Equal(t, "echo: "+prompt+"\n", r.runAsPrinted(t, line, prompt))
	r.terminalTurnSeen(t, prompt, transcript.EntrypointPrint)
}

// TestRealCLIResumeLineSSH: the line for a session on another host, run as
// printed, reaches it through a real sshd on 127.0.0.1 (the "other host"
// is this machine, so the CLI over there is the test's), enters the
// directory by a ~/ path relative to the login's home, and resumes the
// session with the configured binary and HOME. Both forms of the remote
// command: in double quotes (nothing special in it), and single-quoted
// (the awkward directory).
func TestRealCLIResumeLineSSH(t *testing.T) {
	for _, tc := range []struct{ dir, form string }{
		{"plain dir ü", `"cd ~/'`},
		{awkwardDir, `'cd ~/'\''`},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			srv := sshtest.Start(t)
			r := phoneStarts(t, tc.dir)
			login, err := os.UserHomeDir()
			require.NoError(t, err)
			rel, err := filepath.Rel(login, r.env.Workdir)
			require.NoError(t, err)
			line, err := Resume{
				ID: r.id, Dir: "~/" + rel, Home: r.env.Home,
				// A remote project's binary is the other host's: here the
				// person's claude, by its absolute path (sshd's PATH is its own).
				Binary: filepath.Join(r.env.PersonPATH(), "claude"),
				Remote: &runner.Remote{Host: srv.Host, SSHOptions: srv.Options},
			}.Line()
			require.NoError(t, err)
			t.Logf("line: %s", line)
			require.True(t, strings.HasPrefix(line, "ssh -t "), line)
			require.Contains(t, line, " "+srv.Host+" "+tc.form, "the directory is under the login's home over there")

			const prompt = "typed over ssh: what was the word?"
			assert.Equal(t, "echo: "+prompt+"\n", r.runAsPrinted(t, line, prompt))
			r.terminalTurnSeen(t, prompt, transcript.EntrypointPrint)
		})
	}
}

package login

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// These tests relay the real CLI's login commands, offline: in a temporary
// HOME with no credentials, and without any network (claudetest.NoNetwork),
// since `claude auth login` sends a pasted code to platform.claude.com. So
// everything up to the code exchange is the real CLI's, and the exchange
// itself fails; that failure is what they see the relay report.

// realCLI is the CLI wrapped without a network, and its environment
// without credentials.
func realCLI(t *testing.T) (bin string, env []string, dir string) {
	t.Helper()
	e := claudetest.New(t, fakeapi.Script{})
	delete(e.Vars, "ANTHROPIC_API_KEY")
	return claudetest.NoNetwork(t, e.Binary), e.Environ(), e.Workdir
}

const madeUpCode = "made-up-code-0123456789#made-up-state-abcdef"

// checkSignInURL asserts what the real URL is made of (verified): claude.com's
// authorize page, the manual flow (code=true) whose callback page shows the
// code to paste, PKCE.
func checkSignInURL(t *testing.T, raw, scope string) {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	assert.Equal(t, "claude.com", u.Host)
	assert.Equal(t, "/cai/oauth/authorize", u.Path)
	q := u.Query()
	assert.Equal(t, "true", q.Get("code"))
	assert.Equal(t, "code", q.Get("response_type"))
	assert.Equal(t, "https://platform.claude.com/oauth/code/callback", q.Get("redirect_uri"))
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.NotEmpty(t, q.Get("code_challenge"))
	assert.NotEmpty(t, q.Get("state"))
	assert.Contains(t, strings.Fields(q.Get("scope")), scope)
}

func TestRealAuthLogin(t *testing.T) {
	for _, pipes := range []bool{false, true} {
		name := "terminal"
		if pipes {
			name = "pipes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin, env, dir := realCLI(t)
			cmd := AuthLoginCommand(bin, env)
			cmd.Dir = dir
			r := start(t, context.Background(), cmd, Options{Pipes: pipes})
			checkSignInURL(t, r.upTo(), "user:inference")
			require.NoError(t, r.s.SubmitCode(madeUpCode))
			d := r.done(madeUpCode)
			assert.ErrorIs(t, d.Err, ErrFailed)
			assert.Contains(t, d.Err.Error(), "exited with status 1")
			assert.True(t, strings.HasPrefix(d.Message, "Couldn't log in: "), "the CLI's own words: %q", d.Message)
		})
	}
}

func TestRealSetupToken(t *testing.T) {
	t.Parallel()
	bin, env, dir := realCLI(t)
	cmd := SetupTokenCommand(bin, env)
	cmd.Dir = dir
	r := start(t, context.Background(), cmd, Options{})
	checkSignInURL(t, r.upTo(), "user:inference")
	require.NoError(t, r.s.SubmitCode(madeUpCode))
	// The CLI then waits for Enter to retry; the relay ends it.
	d := r.done(madeUpCode)
	assert.ErrorIs(t, d.Err, ErrFailed)
	assert.True(t, strings.HasPrefix(d.Message, "✘ OAuth error: "), "the CLI's own words: %q", d.Message)
	assert.True(t, d.Token.IsZero())
}

// TestRealSetupTokenNeedsTerminal: over pipes setup-token prints nothing
// and waits, so only the timeout ends it.
func TestRealSetupTokenNeedsTerminal(t *testing.T) {
	t.Parallel()
	bin, env, dir := realCLI(t)
	cmd := SetupTokenCommand(bin, env)
	cmd.Dir = dir
	r := start(t, context.Background(), cmd, Options{Pipes: true, Timeout: 5 * time.Second})
	d := r.done()
	assert.Len(t, r.got, 1, "no URL, no prompt: %#v", r.got)
	assert.ErrorIs(t, d.Err, ErrTimeout)
}

func TestRealAuthLoginCancel(t *testing.T) {
	t.Parallel()
	bin, env, dir := realCLI(t)
	cmd := AuthLoginCommand(bin, env, "--claudeai")
	cmd.Dir = dir
	r := start(t, context.Background(), cmd, Options{})
	r.upTo()
	r.s.Cancel()
	assert.ErrorIs(t, r.done().Err, ErrCanceled)
}

// TestRealLoginFlags pins the flags AuthLoginCommand documents.
func TestRealLoginFlags(t *testing.T) {
	t.Parallel()
	bin, env, dir := realCLI(t)
	for args, want := range map[string][]string{
		"auth login --help":  {"--claudeai", "--console", "--sso", "--email <email>"},
		"setup-token --help": {"Set up a long-lived authentication token (requires Claude subscription)"},
		"auth status --help": {"--json", "--text"},
	} {
		cmd := exec.Command(bin, strings.Fields(args)...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", args, out)
		for _, w := range want {
			assert.Contains(t, string(out), w, args)
		}
	}
}

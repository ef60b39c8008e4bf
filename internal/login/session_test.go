package login

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBin is fakelogin, built by TestMain.
var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakelogin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "login tests:", err)
		os.Exit(1)
	}
	fakeBin = filepath.Join(dir, "fakelogin")
	if out, err := exec.Command("go", "build", "-o", fakeBin, "./fakelogin").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "login tests: build fakelogin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// What the fake shows: a sign-in URL like the CLI's, and (setup-token) a
// made-up token.
const (
	fakeURL = "https://claude.com/cai/oauth/authorize?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code" +
		"&redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback&scope=user%3Ainference" +
		"&code_challenge=testChallenge0123456789abcdefghijklmnopqrst&code_challenge_method=S256&state=testState0123456789abcdefghijklmnopqrstuv"
	fakeToken = "sk-ant-oat01-TESTtestTEST0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-0123456789abcdefAA"
)

// wait bounds every wait on a session; none decides a pass.
const wait = 30 * time.Second

// logBuffer collects a session's log lines, safely from its goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// relayed is one session under test: its events as they came, its log.
type relayed struct {
	t   *testing.T
	s   *Session
	log *logBuffer
	got []Event
}

func start(t *testing.T, ctx context.Context, cmd *exec.Cmd, opts Options) *relayed {
	t.Helper()
	log := &logBuffer{}
	l := zerolog.New(log).Level(zerolog.DebugLevel)
	opts.Logger = &l
	s, err := Start(ctx, cmd, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Cancel()
		<-s.Finished()
	})
	return &relayed{t: t, s: s, log: log}
}

// fakeCmd runs fakelogin with args; the code that succeeds is good (in its
// environment: a secret on a command line would be in the start log).
func fakeCmd(good string, args ...string) *exec.Cmd {
	cmd := exec.Command(fakeBin, append([]string{"-url", fakeURL}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FAKELOGIN_CODE=" + good, "FAKELOGIN_TOKEN=" + fakeToken}
	return cmd
}

// next waits for the next event.
func (r *relayed) next() Event {
	r.t.Helper()
	select {
	case ev, ok := <-r.s.Events():
		require.True(r.t, ok, "Events closed before Done")
		r.got = append(r.got, ev)
		return ev
	case <-time.After(wait):
		r.t.Fatalf("no event within %v; so far %#v", wait, r.got)
	}
	return nil
}

// upTo waits for URL then NeedCode, and returns the URL.
func (r *relayed) upTo() string {
	r.t.Helper()
	u, ok := r.next().(URL)
	require.True(r.t, ok, "first event is the URL: %#v", r.got)
	_, ok = r.next().(NeedCode)
	require.True(r.t, ok, "then the request for the code: %#v", r.got)
	return u.URL
}

// done waits for Done, checks that Events then closes and the program is
// gone, and that no secret shows in any event or log line.
func (r *relayed) done(secrets ...string) Done {
	r.t.Helper()
	var d Done
	for {
		ev := r.next()
		if dd, ok := ev.(Done); ok {
			d = dd
			break
		}
	}
	select {
	case _, ok := <-r.s.Events():
		assert.False(r.t, ok, "Events is closed after Done")
	case <-time.After(wait):
		r.t.Fatal("Events not closed after Done")
	}
	pid := r.s.cmd.Process.Pid
	assert.ErrorIs(r.t, syscall.Kill(pid, 0), syscall.ESRCH, "the program (pid %d) is reaped by Done", pid)
	shown := fmt.Sprintf("%+v %v", r.got, d.Err) + r.log.String()
	for _, s := range secrets {
		assert.NotContains(r.t, shown, s, "a secret shows in an event, error or log line")
		for _, part := range strings.Split(s, "#") {
			if len(part) >= 4 { // the redactor's bound too
				assert.NotContains(r.t, shown, part, "part of a secret shows")
			}
		}
	}
	return d
}

func TestLoginSucceeds(t *testing.T) {
	for _, pipes := range []bool{false, true} {
		t.Run(fmt.Sprintf("pipes=%v", pipes), func(t *testing.T) {
			t.Parallel()
			r := start(t, context.Background(), fakeCmd("abc-123-def-456#state-789-xyz"), Options{Pipes: pipes})
			assert.Equal(t, fakeURL, r.upTo(), "the whole URL, from the hyperlink or the text")
			require.NoError(t, r.s.SubmitCode("  abc-123-def-456#state-789-xyz \n"), "spaces around a pasted code are not part of it")
			d := r.done("abc-123-def-456#state-789-xyz")
			assert.True(t, d.OK, "%+v", d)
			assert.NoError(t, d.Err)
			assert.Equal(t, "Login successful.", d.Message)
			assert.True(t, d.Token.IsZero(), "auth login prints no token")
			assert.Contains(t, r.log.String(), "code sent")
			assert.Contains(t, r.log.String(), `"url":"https://claude.com/cai/oauth/authorize","message":"login: the program showed its sign-in URL"`,
				"the log names the URL without its query")
		})
	}
}

func TestLoginWrongCode(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("right-code-0001#state-0001"), Options{})
	r.upTo()
	require.NoError(t, r.s.SubmitCode("wrong-code-9876#state-5432"))
	d := r.done("wrong-code-9876#state-5432")
	assert.False(t, d.OK)
	assert.ErrorIs(t, d.Err, ErrFailed)
	assert.Contains(t, d.Err.Error(), "exited with status 1")
	assert.Equal(t, "Couldn't log in: Invalid authorization code", d.Message, "the program's own words")
}

func TestLoginTimeout(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused"), Options{Timeout: 500 * time.Millisecond})
	r.upTo()
	d := r.done()
	assert.ErrorIs(t, d.Err, ErrTimeout)
	assert.Equal(t, "the login timed out after 500ms", d.Message)
	assert.ErrorIs(t, r.s.SubmitCode("late-code"), ErrNotWaiting, "a code after the end is refused")
}

func TestLoginCancel(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused"), Options{})
	r.upTo()
	r.s.Cancel()
	r.s.Cancel() // twice is harmless
	d := r.done()
	assert.ErrorIs(t, d.Err, ErrCanceled)
	assert.Equal(t, "the login was cancelled", d.Message)
}

func TestLoginContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r := start(t, ctx, fakeCmd("unused"), Options{})
	r.upTo()
	cancel()
	d := r.done()
	assert.ErrorIs(t, d.Err, context.Canceled)
}

func TestLoginProgramDies(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused", "-die-after-url"), Options{})
	r.upTo()
	d := r.done()
	assert.ErrorIs(t, d.Err, ErrFailed)
	assert.Contains(t, d.Err.Error(), "was killed (killed)")
}

func TestLoginExitsBeforeURL(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused", "-exit-before-url", "3"), Options{})
	d := r.done()
	assert.Len(t, r.got, 1, "only Done: %#v", r.got)
	assert.ErrorIs(t, d.Err, ErrNoURL)
	assert.Contains(t, d.Err.Error(), "exited with status 3")
	assert.Equal(t, "Error: this build cannot log in", d.Message)
}

// TestLoginNeedsTerminal: a program that wants a terminal, given pipes,
// ends without a URL, and says why.
func TestLoginNeedsTerminal(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused", "-style", "setup-token"), Options{Pipes: true})
	d := r.done()
	assert.ErrorIs(t, d.Err, ErrNoURL)
	assert.Equal(t, "setup-token needs a terminal", d.Message)
}

func TestSetupToken(t *testing.T) {
	t.Parallel()
	for _, linger := range []bool{false, true} {
		t.Run(fmt.Sprintf("linger=%v", linger), func(t *testing.T) {
			t.Parallel()
			args := []string{"-style", "setup-token"}
			if linger {
				args = append(args, "-linger") // killed once the token is in hand
			}
			r := start(t, context.Background(), fakeCmd("setup-code-1234#state-5678", args...), Options{})
			assert.Equal(t, fakeURL, r.upTo(), "the hyperlink's target, not the visible pieces")
			require.NoError(t, r.s.SubmitCode("setup-code-1234#state-5678"))
			d := r.done("setup-code-1234#state-5678", fakeToken)
			assert.True(t, d.OK, "%+v", d)
			assert.Equal(t, fakeToken, d.Token.Reveal())
			assert.NotContains(t, fmt.Sprintf("%v %+v %#v", d, d, d), fakeToken, "the token prints as redacted")
			assert.Contains(t, d.Message, "token created")
		})
	}
}

// TestSetupTokenWrongCode: setup-token waits for Enter after a failure;
// the relay ends it there instead of waiting for the timeout.
func TestSetupTokenWrongCode(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("good-code-1234", "-style", "setup-token"), Options{})
	r.upTo()
	require.NoError(t, r.s.SubmitCode("bad-code-4321#zz"))
	d := r.done("bad-code-4321#zz")
	assert.ErrorIs(t, d.Err, ErrFailed)
	assert.Equal(t, "✘ OAuth error: Invalid authorization code.", d.Message)
}

func TestSubmitCodeRefusals(t *testing.T) {
	t.Parallel()
	r := start(t, context.Background(), fakeCmd("unused", "-exit-before-url", "0"), Options{})
	assert.ErrorIs(t, r.s.SubmitCode("early-code"), ErrNotWaiting, "before the URL")
	r.done()

	r = start(t, context.Background(), fakeCmd("first-code-ok"), Options{})
	r.upTo()
	for _, bad := range []string{"", "   ", "two\nlines", "tab\tinside", "bell\a", strings.Repeat("x", 3000), "\xff\xfe"} {
		assert.ErrorIs(t, r.s.SubmitCode(bad), ErrInvalidCode, "%q", bad)
	}
	require.NoError(t, r.s.SubmitCode("first-code-ok"))
	err := r.s.SubmitCode("second-code")
	assert.ErrorIs(t, err, ErrNotWaiting, "one code per session")
	assert.NotContains(t, err.Error(), "second-code", "an error never quotes the code")
	d := r.done("first-code-ok", "second-code")
	assert.True(t, d.OK, "%+v", d)
}

// TestRelayOneAtATime: a second Start while one login runs is refused, and
// works once it has finished.
func TestRelayOneAtATime(t *testing.T) {
	t.Parallel()
	var relay Relay
	first, err := relay.Start(context.Background(), fakeCmd("unused"), Options{})
	require.NoError(t, err)
	t.Cleanup(first.Cancel)
	assert.Same(t, first, relay.Running())
	second, err := relay.Start(context.Background(), fakeCmd("unused"), Options{})
	assert.ErrorIs(t, err, ErrBusy)
	assert.Nil(t, second)

	relay.Running().Cancel()
	select {
	case <-first.Finished():
	case <-time.After(wait):
		t.Fatal("the cancelled login did not finish")
	}
	assert.Nil(t, relay.Running())
	third, err := relay.Start(context.Background(), fakeCmd("unused"), Options{})
	require.NoError(t, err, "free again once the first has finished")
	third.Cancel()
	<-third.Finished()
}

// TestStartFailure: a program that cannot start is an error from Start,
// and nothing runs.
func TestStartFailure(t *testing.T) {
	_, err := Start(context.Background(), exec.Command(filepath.Join(t.TempDir(), "missing")), Options{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file"), "%v", err)
}

// TestDefaultEnvWithholdsBotToken: a command without an Env gets the
// allow-listed environment, not the daemon's.
func TestDefaultEnvWithholdsBotToken(t *testing.T) {
	t.Setenv("UNTETHER_TELEGRAM_BOT_TOKEN", "123:do-not-pass")
	script := filepath.Join(t.TempDir(), "show-env")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"token=[$UNTETHER_TELEGRAM_BOT_TOKEN] path=[${PATH:+set}]\"\nexit 1\n"), 0o755))
	r := start(t, context.Background(), exec.Command(script), Options{Pipes: true})
	d := r.done()
	assert.Equal(t, "token=[] path=[set]", d.Message)
}

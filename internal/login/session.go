package login

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// Event is what a Session reports on Events, in this order: URL, NeedCode
// (each at most once), then Done, always, last.
type Event interface{ isEvent() }

// URL is the authorization URL the program showed: the user opens it, signs
// in, and is shown a code.
type URL struct{ URL string }

// NeedCode means the program asks for that code (its prompt, redacted).
type NeedCode struct{ Prompt string }

// Done is the outcome; the program has exited (or been killed and reaped).
type Done struct {
	OK bool
	// Message is what the program said last about the outcome ("Login
	// successful.", "Couldn't log in: …"), or why the session ended;
	// redacted.
	Message string
	// Token is the token `claude setup-token` printed, when it printed one;
	// it appears nowhere else (not in Message, not in a log).
	Token config.Secret
	// Err is nil when OK, else it matches ErrFailed, ErrNoURL, ErrTimeout,
	// ErrCanceled or the context's error.
	Err error
}

func (URL) isEvent()      {}
func (NeedCode) isEvent() {}
func (Done) isEvent()     {}

// Errors a session reports or refuses with. Match them with errors.Is.
var (
	ErrBusy        = errors.New("a login is already running")
	ErrFailed      = errors.New("the login failed")
	ErrNoURL       = errors.New("the login program ended before it showed a sign-in URL")
	ErrTimeout     = errors.New("the login timed out")
	ErrCanceled    = errors.New("the login was cancelled")
	ErrNotWaiting  = errors.New("the login is not waiting for a code")
	ErrInvalidCode = errors.New("not a code: want one line of printable text")
)

// DefaultTimeout bounds a session whose Options name none: time to open
// the URL, sign in and paste the code.
const DefaultTimeout = 10 * time.Minute

// Options adjust a session.
type Options struct {
	// Timeout bounds the whole session; 0 means DefaultTimeout.
	Timeout time.Duration
	// Pipes runs the program with pipes instead of a pseudo-terminal.
	// `claude auth login` works either way, `claude setup-token` only with
	// a terminal (verified).
	Pipes bool
	// Logger gets one line per step (start, URL host, code sent, outcome),
	// and the program's output lines at debug level, all redacted; nil logs
	// nothing.
	Logger *zerolog.Logger
}

// Terminal size the program is given: wide, so that an interface that
// wraps its text to the terminal (Ink) wraps no URL or token.
const (
	termCols = 500
	termRows = 50
)

// Bounds on waiting for a program's last words: output still held by a
// grandchild after the program exited, and a program that printed its token
// but does not exit.
const (
	drainWait = 2 * time.Second
	tokenWait = 5 * time.Second
)

var (
	// promptRe is a request for the code: "Paste code here if prompted >"
	// (auth login) and "Paste code here if prompted" (setup-token), verified.
	promptRe = regexp.MustCompile(`(?i)paste (the )?code|enter (the )?code`)
	// retryRe is setup-token's failure screen, which waits for Enter
	// instead of exiting (verified: "OAuth error: … Press Enter to retry").
	retryRe = regexp.MustCompile(`(?i)press enter to (retry|try again)`)
	// outcomeRe picks the line that tells how it went among the program's
	// last lines.
	outcomeRe = regexp.MustCompile(`(?i)error|couldn't|could not|cannot|can't|fail|invalid|denied|expired|refused|success|created|logged in|signed in`)
)

type phase int

const (
	waitingURL  phase = iota
	sawURL            // URL sent; a code may be submitted
	waitingCode       // NeedCode sent
	codeSent
	over // Done is decided
)

// Session is one run of a login program. Its methods never block.
type Session struct {
	cmd     *exec.Cmd
	out     io.ReadCloser // the terminal, or the read end of the output pipe
	in      io.Writer     // the terminal, or stdin
	closeIn func() error
	enter   string // what ends a line typed at the program

	events   chan Event
	codes    chan string
	cancel   chan struct{}
	cancelMu sync.Once
	done     chan struct{}

	red redactor
	log zerolog.Logger

	mu    sync.Mutex
	phase phase
}

// Start runs cmd (unstarted; its Stdin, Stdout, Stderr and SysProcAttr are
// set here; a nil Env means runner.BuildEnv(os.Environ(), nil), never the
// daemon's whole environment) under a pseudo-terminal, or with pipes, and
// relays it. The
// session ends on its own (the program exits, the timeout passes), on
// Cancel, or when ctx ends. The process runs in a session (or process
// group) of its own, is killed with the daemon, and is reaped before Done.
func Start(ctx context.Context, cmd *exec.Cmd, opts Options) (*Session, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if cmd.Env == nil {
		// Never the daemon's whole environment: it holds the bot token.
		cmd.Env = runner.BuildEnv(os.Environ(), nil)
	}
	s := &Session{
		cmd: cmd, enter: "\r",
		events: make(chan Event, 3), codes: make(chan string, 1),
		cancel: make(chan struct{}), done: make(chan struct{}),
		log: zerolog.Nop(),
	}
	if opts.Logger != nil {
		s.log = opts.Logger.With().Str("login", filepath.Base(cmd.Path)).Logger()
	}
	var err error
	if opts.Pipes {
		err = s.startPipes()
	} else {
		err = s.startTerminal()
	}
	if err != nil {
		return nil, fmt.Errorf("start the login %s: %w", filepath.Base(cmd.Path), err)
	}
	s.log.Info().Str("args", s.red.redact(strings.Join(cmd.Args[1:], " "))).Int("pid", cmd.Process.Pid).Bool("terminal", !opts.Pipes).Msg("login started")
	go s.run(ctx, opts.Timeout)
	return s, nil
}

// Events delivers the session's events; it is closed after Done. It holds
// all of them, so a reader that is busy for a while loses nothing and
// blocks nothing.
func (s *Session) Events() <-chan Event { return s.events }

// Finished is closed once the session is over and Done is on Events.
func (s *Session) Finished() <-chan struct{} { return s.done }

// SubmitCode types code (and Enter) at the program, once, after the URL.
// The code is a secret from here on: it is blanked out of every message,
// error and log line, including the program's echo of it.
func (s *Session) SubmitCode(code string) error {
	code = strings.TrimSpace(code)
	if !validCode(code) {
		return ErrInvalidCode
	}
	s.red.add(code) // before anything could echo it
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.phase {
	case over:
		return fmt.Errorf("%w: it has finished", ErrNotWaiting)
	case waitingURL:
		return fmt.Errorf("%w: no sign-in URL yet", ErrNotWaiting)
	case codeSent:
		return fmt.Errorf("%w: a code was already sent", ErrNotWaiting)
	}
	s.phase = codeSent
	s.codes <- code // room for exactly this one
	return nil
}

// validCode accepts one line of printable text, as long as an OAuth code
// (with its state) can reasonably be.
func validCode(code string) bool {
	if code == "" || len(code) > 2048 || !utf8.ValidString(code) {
		return false
	}
	for _, r := range code {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Cancel ends the session: the program is killed, and Done says
// ErrCanceled. It may be called any number of times, from anywhere.
func (s *Session) Cancel() { s.cancelMu.Do(func() { close(s.cancel) }) }

// kill ends the program and anything it started in its session.
func (s *Session) kill() {
	if p := s.cmd.Process; p != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		_ = p.Kill()
	}
}

// run relays the program until it has exited and its output is read.
func (s *Session) run(ctx context.Context, timeout time.Duration) {
	defer close(s.done)
	chunks := make(chan []byte, 16)
	go s.read(chunks)
	exited := make(chan error, 1)
	go func() { exited <- runner.WaitOwned(s.cmd) }()
	written := make(chan error, 1)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()

	var (
		sc       screen
		ended    *Done // decided before the exit: timeout, cancel, a failure screen
		token    string
		sent     bool // the code went to the program; sc's mark is there
		waitErr  error
		exitSeen bool
		logged   int // lines of sc already logged
		drain    <-chan time.Time
		tokenCut <-chan time.Time
		// Closed channels stay ready: each is taken once, then set nil.
		canceled = s.cancel
		stopped  = ctx.Done()
	)
	end := func(d Done) {
		if ended == nil {
			ended = &d
			s.kill()
		}
	}
	for chunks != nil || !exitSeen {
		select {
		case p, ok := <-chunks:
			if !ok {
				chunks = nil
				continue
			}
			sc.write(p)
			logged = s.logLines(sc.lines(), logged, false)
			s.observe(&sc)
			if sent && token == "" {
				if t := accessTokenRe.FindString(strings.Join(sc.since(), " ")); t != "" {
					token = t
					s.red.add(t)
					s.log.Info().Msg("login: the program printed a token")
					tokenCut = time.After(tokenWait)
				}
			}
			if sent && token == "" && retryRe.MatchString(strings.Join(sc.since(), "\n")) {
				end(Done{Err: ErrFailed, Message: s.outcome(sc.since(), "the sign-in failed")})
			}
		case code := <-s.codes:
			sent = true
			sc.setMark()
			s.log.Info().Int("code_length", len(code)).Msg("login: code sent")
			go func() {
				_, err := io.WriteString(s.in, code+s.enter)
				written <- err
			}()
		case err := <-written:
			if err != nil {
				end(Done{Err: fmt.Errorf("%w: pass the code to the program: %s", ErrFailed, s.red.redact(err.Error())),
					Message: "the code could not be passed to the login program"})
			}
		case <-deadline.C:
			end(Done{Err: ErrTimeout, Message: fmt.Sprintf("the login timed out after %v", timeout)})
		case <-canceled:
			canceled = nil
			end(Done{Err: ErrCanceled, Message: "the login was cancelled"})
		case <-stopped:
			stopped = nil
			end(Done{Err: ctx.Err(), Message: "the login was stopped"})
		case <-tokenCut:
			s.kill() // the token is in hand; the program need not linger
		case waitErr = <-exited:
			exitSeen = true
			if chunks != nil {
				drain = time.After(drainWait)
			}
		case <-drain:
			chunks = nil // a grandchild holds the terminal: what it says is not the program's
		}
	}
	s.logLines(sc.lines(), logged, true)
	_ = s.out.Close()
	if s.closeIn != nil {
		_ = s.closeIn()
	}
	s.mu.Lock()
	ph := s.phase
	s.phase = over // no code is taken from here on
	s.mu.Unlock()
	d := s.result(&sc, ph, ended, token, sent, waitErr)
	ev := s.log.Info()
	if !d.OK {
		ev = s.log.Warn().AnErr("error", d.Err)
	}
	ev.Bool("ok", d.OK).Str("message", d.Message).Bool("token", !d.Token.IsZero()).Msg("login finished")
	s.events <- d
	close(s.events)
}

// read forwards the program's output until it ends or the session does.
func (s *Session) read(chunks chan<- []byte) {
	defer close(chunks)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.out.Read(buf)
		if n > 0 {
			select {
			case chunks <- append([]byte(nil), buf[:n]...):
			case <-s.done:
				return
			}
		}
		if err != nil {
			return // EOF, or EIO once no process holds the terminal
		}
	}
}

// observe sends URL and NeedCode as the screen shows them.
func (s *Session) observe(sc *screen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == waitingURL {
		u := sc.authURL()
		if u == "" {
			return
		}
		s.phase = sawURL
		s.events <- URL{URL: u}
		s.log.Info().Str("url", urlForLog(u)).Msg("login: the program showed its sign-in URL")
	}
	if s.phase == sawURL {
		for _, l := range sc.lines() {
			if promptRe.MatchString(l) {
				s.phase = waitingCode
				s.events <- NeedCode{Prompt: s.red.redact(l)}
				s.log.Info().Msg("login: the program asks for the code")
				return
			}
		}
	}
}

// logLines logs, at debug level and redacted, the lines from index from
// on, but the last one unless all is set (it may not be finished: the echo
// of a code is typed after its prompt), and returns how many are logged.
func (s *Session) logLines(lines []string, from int, all bool) int {
	to := len(lines)
	if !all {
		to--
	}
	for i := min(from, len(lines)); i < to; i++ {
		s.log.Debug().Str("line", s.red.redact(lines[i])).Msg("login output")
	}
	return max(from, to)
}

// result is the Done of a session that is over.
func (s *Session) result(sc *screen, ph phase, ended *Done, token string, sent bool, waitErr error) Done {
	if token != "" {
		// The token is the result, however the program then ended.
		return Done{OK: true, Token: config.NewSecret(token), Message: s.outcome(sc.since(), "a long-lived token was created")}
	}
	if ended != nil {
		ended.Message = s.red.redact(ended.Message)
		return *ended
	}
	lines := sc.lines()
	if sent {
		lines = sc.since()
	}
	if waitErr == nil {
		return Done{OK: true, Message: s.outcome(lines, "the login program finished")}
	}
	how := "the login program " + describeExit(waitErr)
	if ph == waitingURL {
		return Done{Err: fmt.Errorf("%w: it %s", ErrNoURL, describeExit(waitErr)), Message: s.outcome(lines, how)}
	}
	return Done{Err: fmt.Errorf("%w: the program %s", ErrFailed, describeExit(waitErr)), Message: s.outcome(lines, how)}
}

// outcome is the line among lines that tells how it went (the last one
// that names an error or a success, else the last), redacted and short;
// fallback when there is none.
func (s *Session) outcome(lines []string, fallback string) string {
	pick := ""
	for i := len(lines) - 1; i >= 0 && pick == ""; i-- {
		if l := s.red.redact(lines[i]); l != Redacted && outcomeRe.MatchString(l) {
			pick = l
		}
	}
	for i := len(lines) - 1; i >= 0 && pick == ""; i-- {
		if l := s.red.redact(lines[i]); l != Redacted {
			pick = l
		}
	}
	if pick == "" {
		return fallback
	}
	if r := []rune(pick); len(r) > 300 {
		pick = string(r[:300]) + "…"
	}
	return pick
}

// describeExit says how a program ended: "exited with status 1", "was
// killed (signal: killed)".
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed (" + ws.Signal().String() + ")"
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return "could not be waited for: " + err.Error()
}

// urlForLog is the URL without its query: the PKCE challenge and state are
// no one's business in a log.
func urlForLog(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}

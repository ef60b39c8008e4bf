package login

import (
	"context"
	"os/exec"
	"sync"
)

// Relay runs at most one login at a time: a login writes the CLI's
// credentials (one ~/.claude per HOME), and two at once would race for
// them and leave the user with two URLs of which only one counts. A second
// Start while one runs is refused with ErrBusy; the caller may say so, or
// Cancel the running one (Running) and start again.
type Relay struct {
	mu  sync.Mutex
	cur *Session
}

// Start is the package's Start, refused with ErrBusy while another session
// of this Relay has not finished.
func (r *Relay) Start(ctx context.Context, cmd *exec.Cmd, opts Options) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && !r.cur.finished() {
		return nil, ErrBusy
	}
	s, err := Start(ctx, cmd, opts)
	if err != nil {
		return nil, err
	}
	r.cur = s
	return s, nil
}

// Running is the session that has not finished yet, or nil.
func (r *Relay) Running() *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || r.cur.finished() {
		return nil
	}
	return r.cur
}

func (s *Session) finished() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// AuthLoginCommand is `binary auth login [args…]` with env as its whole
// environment ("KEY=value", e.g. runner.BuildEnv's; none means Start's
// default). args are the CLI's
// flags (2.1.328, verified): --claudeai (the default: a Claude
// subscription), --console (API usage billing), --sso, --email ADDRESS.
func AuthLoginCommand(binary string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, append([]string{"auth", "login"}, args...)...)
	cmd.Env = env
	return cmd
}

// SetupTokenCommand is `binary setup-token` with env as its whole
// environment (as for AuthLoginCommand): it makes a long-lived (one year) OAuth token for a Claude
// subscription and prints it instead of storing it. It needs a terminal
// (verified).
func SetupTokenCommand(binary string, env []string) *exec.Cmd {
	cmd := exec.Command(binary, "setup-token")
	cmd.Env = env
	return cmd
}

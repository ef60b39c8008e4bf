package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
)

// Errors of a spawn that failed because the world changed under the
// daemon. Nothing was started and nothing was stopped: live processes keep
// working, and the next spawn looks again, so it works as soon as the path
// is back. Match them with errors.Is; errors.As to a *MissingError gives
// the path.
var (
	ErrBinaryMissing  = errors.New("claude CLI binary not found")
	ErrWorkdirMissing = errors.New("working directory not found")
)

// MissingError is a spawn that failed because a path the CLI needs is not
// there (or not usable).
type MissingError struct {
	Kind error // ErrBinaryMissing or ErrWorkdirMissing
	Path string
	Err  error // the cause, e.g. fs.ErrNotExist
}

func (e *MissingError) Error() string { return fmt.Sprintf("%v: %s: %v", e.Kind, e.Path, e.Err) }

// Unwrap makes both the kind and the cause match errors.Is.
func (e *MissingError) Unwrap() []error { return []error{e.Kind, e.Err} }

var errNotDir = errors.New("not a directory")

// preflight resolves the CLI binary and checks the workdir, at every
// spawn: a binary updated in place (npm) or moved along $PATH is picked up
// by the next process, one that vanished gives ErrBinaryMissing, and a
// deleted workdir gives ErrWorkdirMissing instead of being recreated.
func (s *Session) preflight() (string, error) {
	if r := s.cfg.Remote; r != nil {
		// The CLI and the directory are on the other host: the wrapper
		// reports them (remote.go). Here only ssh must be there.
		ssh, err := exec.LookPath(r.sshBinary())
		if err != nil {
			return "", &MissingError{Kind: ErrBinaryMissing, Path: r.sshBinary(), Err: err}
		}
		return ssh, nil
	}
	bin, err := exec.LookPath(s.cfg.Binary)
	if err != nil {
		return "", &MissingError{Kind: ErrBinaryMissing, Path: s.cfg.Binary, Err: err}
	}
	if dir := s.cfg.Workdir; dir != "" {
		st, err := os.Stat(dir)
		if err == nil && !st.IsDir() {
			err = errNotDir
		}
		if err != nil {
			return "", &MissingError{Kind: ErrWorkdirMissing, Path: dir, Err: err}
		}
	}
	return bin, nil
}

// startError names what failed when exec itself did: the binary or the
// workdir can still vanish between preflight and the exec.
func (s *Session) startError(bin string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
		if pe.Op == "chdir" {
			return &MissingError{Kind: ErrWorkdirMissing, Path: s.cfg.Workdir, Err: err}
		}
		return &MissingError{Kind: ErrBinaryMissing, Path: bin, Err: err}
	}
	return fmt.Errorf("start CLI %s: %w", bin, err)
}

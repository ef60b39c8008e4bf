package runner

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrInternal means a bug in untether's own supervision of a CLI process
// (a recovered panic) ended that process. The session stays usable: the
// next message resumes it, and the daemon keeps running.
var ErrInternal = errors.New("internal error in untether's CLI supervision")

// faultPoint names a place where tests inject failures through
// Config.fault.
type faultPoint string

const (
	faultReadLine  faultPoint = "read line" // the reader, after each stdout line
	faultSupervise faultPoint = "supervise" // the supervisor, after the CLI exited
)

// fault calls the test hook at point p; production configs have none.
func (s *Session) fault(p faultPoint) {
	if s.cfg.fault != nil {
		s.cfg.fault(p)
	}
}

func (s *Session) maxLine() int {
	if s.cfg.maxLine > 0 {
		return s.cfg.maxLine
	}
	return MaxLineBytes
}

// fail records why proc is being ended by us although nobody asked for
// it; the first reason wins and is reported in its ProcessExited.
func (proc *process) fail(err error) {
	proc.failMu.Lock()
	defer proc.failMu.Unlock()
	if proc.failure == nil {
		proc.failure = err
	}
}

func (proc *process) failed() error {
	proc.failMu.Lock()
	defer proc.failMu.Unlock()
	return proc.failure
}

// recovered turns a panic in one of proc's goroutines into the end of
// proc: logged with its stack, the process tree killed, and the failure
// reported as ErrInternal in the exit event.
func (s *Session) recovered(proc *process, where string, r any) error {
	err := fmt.Errorf("%w: %s: %v", ErrInternal, where, r)
	s.log.Error().Err(err).Str("stack", string(debug.Stack())).Msg("recovered a panic; killing the CLI process")
	proc.fail(err)
	killGroup(proc.pid)
	return err
}

package runner

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Interrupt stops the running turn: the interrupt control request first,
// then SIGINT (which the CLI treats the same), then killing the process
// group, each after StopTimeout without the turn ending. Interrupting an
// idle session is a no-op.
func (s *Session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	proc := s.proc
	busy := s.state == StateBusy || s.state == StateApproval
	s.mu.Unlock()
	if proc == nil || !busy {
		return nil
	}
	if _, err := s.request(ctx, "interrupt", nil); err != nil {
		s.log.Warn().Err(err).Msg("interrupt request failed; escalating")
	}
	if s.waitTurnEnd(ctx, proc, s.stopTimeout()) {
		return nil
	}
	s.log.Warn().Msg("turn still running after interrupt; sending SIGINT")
	_ = proc.cmd.Process.Signal(syscall.SIGINT)
	if s.waitTurnEnd(ctx, proc, s.stopTimeout()) {
		return nil
	}
	s.log.Warn().Msg("turn still running after SIGINT; killing the process group")
	killGroup(proc.pid)
	select {
	case <-proc.exited:
	case <-ctx.Done():
		return fmt.Errorf("interrupt: %w", ctx.Err())
	}
	return nil
}

// waitTurnEnd waits until no turn runs on proc (or it exited).
func (s *Session) waitTurnEnd(ctx context.Context, proc *process, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		done := s.proc != proc || (!s.turnOpen && len(s.approvals) == 0 && len(s.inflight) == 0)
		ch := s.stateCh
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-proc.exited:
			return true
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// CloseProcess ends the CLI process gracefully, keeping the session usable:
// closing stdin lets a running turn finish; SIGTERM and then SIGKILL to the
// group follow, each after StopTimeout. The next Send resumes.
func (s *Session) CloseProcess(ctx context.Context) error {
	s.mu.Lock()
	proc := s.proc
	if proc == nil {
		s.mu.Unlock()
		return nil
	}
	proc.requested.Store(true)
	s.setStateLocked(StateStopping)
	s.mu.Unlock()

	s.writeMu.Lock()
	_ = proc.stdin.Close()
	s.writeMu.Unlock()
	if s.waitExit(ctx, proc, s.stopTimeout()) {
		return nil
	}
	s.log.Warn().Msg("CLI did not exit after stdin closed; sending SIGTERM")
	_ = signalGroup(proc.pid, syscall.SIGTERM)
	if s.waitExit(ctx, proc, s.stopTimeout()) {
		return nil
	}
	s.log.Warn().Msg("CLI ignored SIGTERM; killing the process group")
	killGroup(proc.pid)
	if !s.waitExit(ctx, proc, s.stopTimeout()) {
		return fmt.Errorf("close CLI process %d: still running after SIGKILL", proc.pid)
	}
	return nil
}

// waitExit waits until proc was reaped and its exit fully handled.
func (s *Session) waitExit(ctx context.Context, proc *process, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		gone := s.proc != proc
		ch := s.stateCh
		s.mu.Unlock()
		if gone {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Kill SIGKILLs the process group at once, as a crash would. The session
// stays usable; the next Send resumes.
func (s *Session) Kill() {
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if proc != nil {
		proc.requested.Store(true)
		killGroup(proc.pid)
	}
}

// Close ends the process gracefully and closes the event stream.
func (s *Session) Close(ctx context.Context) error {
	err := s.CloseProcess(ctx)
	s.emitMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.events)
	}
	s.emitMu.Unlock()
	s.mu.Lock()
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.mu.Unlock()
	return err
}

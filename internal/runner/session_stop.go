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

// waitExit waits until proc was reaped and the session let go of it. The
// rest of its exit handling (the log line, ProcessExited) may still run on
// its supervisor: Close waits for that (workers).
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

// Close ends the process gracefully, waits (within ctx) until no goroutine
// of the session runs any more (the supervisor of each process, which
// reports its exit, and idle or eviction closes), and closes the event
// stream. A Send that races Close fails with ErrClosed; a process it was
// starting is ended. Without that wait a supervisor could still log and
// emit after Close returned (in the daemon: after shutdown finished).
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true // from here on nothing is added to workers
	s.mu.Unlock()
	err := s.CloseProcess(ctx)
	if werr := s.waitWorkers(ctx); err == nil {
		err = werr
	}
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

// addWorker counts a goroutine in s.workers, unless Close began.
func (s *Session) addWorker() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.workers.Add(1)
	return true
}

// waitWorkers waits until s.workers is zero, or ctx ends.
func (s *Session) waitWorkers(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close session: wait for its supervisor: %w", ctx.Err())
	}
}

// evict closes the process to make room in the pool (see Pool.acquire).
func (s *Session) evict(ctx context.Context) {
	if !s.addWorker() {
		return // Close began; it ends the process
	}
	defer s.workers.Done()
	if err := s.CloseProcess(ctx); err != nil {
		s.log.Warn().Err(err).Msg("close the CLI process to make room for another")
	}
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// supervise reads the process's stdout, reaps it, and handles its exit. A
// panic here or in the reader ends the process (not the daemon) and is
// reported in its ProcessExited. It ends the worker count ensureProcess
// took for it, once the exit is fully handled.
func (s *Session) supervise(proc *process) {
	defer s.workers.Done()
	defer func() {
		if r := recover(); r != nil {
			s.abandon(proc, s.recovered(proc, "supervisor", r))
		}
	}()
	go func() {
		defer close(proc.exited)
		proc.waitErr = waitOwned(proc.cmd)
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer func() {
			if r := recover(); r != nil {
				s.recovered(proc, "stdout reader", r)
			}
		}()
		s.readLoop(proc)
	}()
	select {
	case <-readDone:
		<-proc.exited
	case <-proc.exited:
		// Everything the CLI wrote is in the pipe; only a grandchild holding
		// stdout can keep it open now. Give it StopTimeout, then kill the
		// CLI's tree, then stop reading.
		select {
		case <-readDone:
		case <-time.After(s.stopTimeout()):
			s.log.Warn().Msg("stdout still open after CLI exit; killing its process tree")
			s.killTree(proc)
			select {
			case <-readDone:
			case <-time.After(s.stopTimeout()):
				_ = proc.stdout.Close()
				<-readDone
			}
		}
	}
	s.killTree(proc) // tools and MCP servers the CLI left behind
	_ = proc.stdout.Close()
	s.fault(faultSupervise)
	s.processGone(proc)
}

// killTree kills what is left of proc's process tree: its group, and the
// tools that left the group (setsid) but carry its tag.
func (s *Session) killTree(proc *process) {
	n, err := killTree(proc.pid, proc.tag)
	if err != nil {
		s.log.Warn().Err(err).Msg("kill the CLI's process tree")
	}
	if n > 0 {
		s.log.Info().Int("killed", n).Msg("killed processes the CLI left behind")
	}
}

// abandon finalises proc after its supervisor panicked: the process was
// killed by recovered; once it is reaped, its tree goes and the session
// learns it exited, so the next message starts a new process.
func (s *Session) abandon(proc *process, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Interface("panic", r).Msg("finalising a CLI process after a panic failed")
		}
	}()
	<-proc.exited // SIGKILL cannot be ignored; Wait returns
	s.killTree(proc)
	_ = proc.stdout.Close()
	if !proc.gone.Load() {
		s.processGone(proc)
		return
	}
	// processGone itself panicked midway: make sure the session is not
	// left pointing at a dead process, and say what happened.
	s.mu.Lock()
	var pending Background
	if s.proc == proc {
		s.proc = nil
		clear(s.approvals)
		clear(s.inflight)
		s.turnOpen = false
		pending = s.takeBackgroundLocked()
		s.setStateLocked(StateExited)
	}
	s.mu.Unlock()
	if s.cfg.Pool != nil {
		s.cfg.Pool.processExited(s)
	}
	s.track(proc, false)
	s.emit(ProcessExited{ExitCode: -1, Err: err, Pending: pending})
}

func (s *Session) readLoop(proc *process) {
	lr := newLineReader(proc.stdout, s.maxLine())
	var evs []Event
	warned := map[string]bool{}
	defer proc.started()
	for {
		line, err := lr.next()
		proc.started()
		if err != nil {
			if errors.Is(err, ErrLineTooLong) {
				s.log.Error().Err(err).Msg("killing the CLI process: its stdout line is over the limit")
				proc.fail(err)
				killGroup(proc.pid)
			}
			return
		}
		s.fault(faultReadLine)
		if len(line) == 0 {
			continue
		}
		s.lastOutput.Store(monoNow())
		f, derr := decodeLine(line)
		evs = decodeEvents(s.tr, f, derr, line, evs[:0])
		s.observe(proc, f)
		for _, ev := range evs {
			switch e := ev.(type) {
			case Unknown:
				if !warned[e.Kind] {
					warned[e.Kind] = true
					s.log.Warn().Str("kind", e.Kind).Err(e.Err).Int("bytes", len(e.Raw)).Msg("unknown or partly decoded CLI frame; kept raw")
				}
			case Warning:
				s.log.Warn().Err(e.Err).Int("bytes", len(e.Line)).Msg("non-JSON line on CLI stdout")
			case BackgroundTasks, ToolStarted, ToolFinished, TurnStarted:
				s.observeBackground(ev) // background.go
			}
			s.deliver(proc, ev)
		}
	}
}

// deliver emits ev, or holds it while a resumed process has not yet shown
// that its session id works.
func (s *Session) deliver(proc *process, ev Event) {
	if _, ok := ev.(TurnStarted); ok && proc.holding {
		proc.holding = false
		for _, h := range proc.held {
			s.emit(h)
		}
		proc.held = nil
	}
	if proc.holding {
		proc.held = append(proc.held, ev)
		return
	}
	s.emit(ev)
}

// observe updates supervision state from a frame and answers the control
// requests nobody else will.
func (s *Session) observe(proc *process, f Frame) {
	switch f := f.(type) {
	case *ControlRequestFrame:
		if f.Request.Subtype == "can_use_tool" {
			s.mu.Lock()
			s.approvals[f.RequestID] = f.Request.Input
			s.recomputeStateLocked()
			s.mu.Unlock()
			return
		}
		// Every control request needs an answer or the CLI waits forever.
		s.log.Info().Str("subtype", f.Request.Subtype).Msg("refusing unsupported CLI control request")
		line, err := encodeControlError(f.RequestID, "untether does not support control request "+f.Request.Subtype)
		if err == nil {
			err = s.write(proc, line)
		}
		if err != nil {
			s.log.Warn().Err(err).Msg("answer CLI control request")
		}
	case *ControlCancelFrame:
		s.mu.Lock()
		delete(s.approvals, f.RequestID)
		s.recomputeStateLocked()
		s.mu.Unlock()
	case *ControlResponseFrame:
		s.mu.Lock()
		ch := s.hostReqs[f.Response.RequestID]
		s.mu.Unlock()
		if ch != nil {
			select {
			case ch <- f.Response:
			default:
			}
		}
	case *SystemFrame:
		if f.Subtype == "init" {
			s.mu.Lock()
			proc.sawInit = true
			s.turnOpen = true
			if f.SessionID != "" && SessionID(f.SessionID) != s.id {
				// Only a canonical UUID is adopted: the id becomes the
				// next process's --resume argument (ids.go).
				if id, err := ParseSessionID(f.SessionID); err != nil {
					s.log.Error().Err(err).Msg("CLI reports a session id that is not a UUID; not adopting it")
				} else {
					s.log.Info().Str("new_session", string(id)).Msg("CLI reports a different session id; adopting it")
					s.id = id
				}
			}
			s.recomputeStateLocked()
			s.mu.Unlock()
		}
	case *CommandLifecycleFrame:
		if f.State == string(MessageCompleted) || f.State == string(MessageCancelled) {
			s.mu.Lock()
			delete(s.inflight, f.CommandUUID)
			s.recomputeStateLocked()
			s.mu.Unlock()
		}
	case *ResultFrame:
		s.mu.Lock()
		s.turnOpen = false
		for _, u := range f.UserMessageUUIDs {
			delete(s.inflight, MessageUUID(u))
		}
		s.lastActive = time.Now()
		s.recomputeStateLocked()
		s.mu.Unlock()
	}
}

// Stderr lines that mean the session id cannot be used as asked.
const (
	stderrNoConversation = "No conversation found"
	stderrIDInUse        = "already in use"
)

// processGone finalises a process that was reaped.
func (s *Session) processGone(proc *process) {
	if !proc.gone.CompareAndSwap(false, true) {
		return
	}
	exit := ProcessExited{ExitCode: -1, StderrTail: proc.stderr.String(),
		Requested: proc.requested.Load(), Err: proc.failed()}
	if ps := proc.cmd.ProcessState; ps != nil {
		exit.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			exit.Signal = ws.Signal().String()
		}
	} else if proc.waitErr != nil && exit.Err == nil {
		exit.Err = fmt.Errorf("wait for the CLI: %w", proc.waitErr)
	}
	if s.cfg.Pool != nil {
		s.cfg.Pool.processExited(s)
	}
	s.track(proc, false) // its tree is gone (killTree ran)

	s.mu.Lock()
	s.proc = nil
	exit.Pending = s.takeBackgroundLocked() // background.go
	var withdrawn []RequestID
	for id := range s.approvals {
		withdrawn = append(withdrawn, id)
	}
	clear(s.approvals)
	s.turnOpen = false
	retry := !proc.sawInit && !exit.Requested && len(s.inflight) > 0 &&
		(strings.Contains(exit.StderrTail, stderrNoConversation) || strings.Contains(exit.StderrTail, stderrIDInUse))
	var resend [][]byte
	oldID := s.id
	if retry {
		for _, line := range s.inflight {
			resend = append(resend, line)
		}
		if strings.Contains(exit.StderrTail, stderrIDInUse) {
			s.resume = true // the id exists after all
		} else {
			s.id, s.resume = NewSessionID(), false
			s.log = s.cfg.Logger.With().Str("session", string(s.id)).Logger()
		}
	} else {
		clear(s.inflight)
	}
	s.setStateLocked(StateExited)
	s.mu.Unlock()

	if retry {
		s.log.Warn().Str("previous", string(oldID)).Str("stderr", exit.StderrTail).Msg("session could not be resumed; starting over")
		s.retry(oldID, resend)
		return
	}
	// A process that died before showing its session works: its held
	// frames are the only record of why, so they are delivered now.
	for _, h := range proc.held {
		s.emit(h)
	}
	for _, id := range withdrawn {
		s.emit(ApprovalWithdrawn{RequestID: id})
	}
	lvl := s.log.Info()
	if !exit.Requested {
		lvl = s.log.Warn()
	}
	lvl.Int("pid", proc.pid).Int("exit_code", exit.ExitCode).AnErr("failure", exit.Err).Str("signal", exit.Signal).Bool("requested", exit.Requested).Msg("CLI process exited")
	s.emit(exit)
}

// retry restarts after an unusable session id and resends the messages the
// dead process never answered.
func (s *Session) retry(oldID SessionID, lines [][]byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.ensureProcess(ctx); err != nil {
		s.log.Error().Err(err).Msg("restart after failed resume")
		s.emit(ProcessExited{ExitCode: -1, StderrTail: err.Error()})
		return
	}
	s.mu.Lock()
	newID, proc := s.id, s.proc
	s.mu.Unlock()
	if newID != oldID {
		s.emit(SessionRestarted{Previous: oldID, Current: newID, Reason: "the previous conversation was not found"})
	}
	for _, line := range lines {
		if err := s.write(proc, line); err != nil {
			s.log.Error().Err(err).Msg("resend message after restart")
		}
	}
}

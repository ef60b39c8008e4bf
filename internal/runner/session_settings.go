package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AdoptPermissionMode records a mode the CLI switched to by itself (a plan
// approved, an "always allow" that carried setMode; a system/status frame
// announces it), so the next process starts in the mode the user last saw.
// Nothing is sent to the CLI.
func (s *Session) AdoptPermissionMode(mode PermissionMode) error {
	if !mode.Valid() {
		return fmt.Errorf("adopt permission mode: %w: %q", ErrInvalidInput, mode)
	}
	s.mu.Lock()
	s.cfg.PermissionMode = mode
	s.mu.Unlock()
	return nil
}

// AdoptModel changes the model the next process starts with, without asking
// the live one (e.g. to fall back from a model the API refused).
func (s *Session) AdoptModel(model string) error {
	if err := CheckModel(model); err != nil {
		return fmt.Errorf("adopt model: %w", err)
	}
	s.mu.Lock()
	s.cfg.Model = model
	s.mu.Unlock()
	return nil
}

// TrySetModel switches the model like SetModel, but says whether a live CLI
// checked and accepted it (live): the CLI tries a name it does not know
// against the API and refuses it if the API does, and the error (wrapping
// ErrControl) keeps the old model. Without a live process the model is only
// remembered for the next one, which is then the first to try it.
func (s *Session) TrySetModel(ctx context.Context, model string) (live bool, err error) {
	if err := CheckModel(model); err != nil {
		return false, fmt.Errorf("set model: %w", err)
	}
	var fields map[string]any
	if model != "" {
		fields = map[string]any{"model": model}
	}
	_, err = s.request(ctx, "set_model", fields)
	switch {
	case errors.Is(err, ErrNoProcess):
	case err != nil:
		return false, fmt.Errorf("set model: %w", err)
	default:
		live = true
	}
	return live, s.AdoptModel(model)
}

// stopTimeout is each step of interrupt and close; SetTimeouts may change it
// while the session runs.
func (s *Session) stopTimeout() time.Duration { return time.Duration(s.stopNanos.Load()) }

// SetTimeouts applies a reloaded idle and stop timeout to a running
// session: an idle process is judged by the new idle timeout from its last
// activity (so a shorter one may close it at once), and the next stop
// waits the new stop timeout. Zero or negative values leave a timeout as
// it is.
func (s *Session) SetTimeouts(idle, stop time.Duration) {
	if stop > 0 {
		s.stopNanos.Store(int64(stop))
	}
	if idle <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.IdleTimeout == idle {
		return
	}
	s.cfg.IdleTimeout = idle
	if s.state != StateIdle {
		return // armed with the new value when the process next goes idle
	}
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.idleTimer = time.AfterFunc(max(0, idle-time.Since(s.lastActive)), s.idleExpired)
}

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Effort is the CLI's effort level (--effort), which it sends to the API as
// output_config.effort. "" leaves the CLI's own default: medium for the
// current models, high for claude-opus-4-5.
type Effort string

// The levels the CLI 2.1.328 accepts (`claude --help`: "low, medium, high,
// xhigh, max"), lowest first.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

// Efforts lists every valid Effort, lowest first.
var Efforts = []Effort{EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}

// EffortRule says in words what ParseEffort accepts.
const EffortRule = "an effort level is one of low, medium, high, xhigh, max"

// Valid reports whether e is one of Efforts, exactly: the live change
// (apply_flag_settings) takes only these spellings, and silently ignores
// any other.
func (e Effort) Valid() bool { return slices.Contains(Efforts, e) }

// ParseEffort reads a level as a user types it ("High", " max "): the
// result is one of Efforts, or an error wrapping ErrInvalidInput that says
// EffortRule. "" is not a level; callers that allow the CLI's default
// check for it first.
func ParseEffort(s string) (Effort, error) {
	e := Effort(strings.ToLower(strings.TrimSpace(s)))
	if !e.Valid() {
		return "", fmt.Errorf("%w: effort %.40q: %s", ErrInvalidInput, s, EffortRule)
	}
	return e, nil
}

// checkEffort accepts "" (the CLI's default) and the valid levels.
func checkEffort(e Effort) error {
	if e != "" && !e.Valid() {
		return fmt.Errorf("%w: effort %.40q: %s", ErrInvalidInput, e, EffortRule)
	}
	return nil
}

// Effort returns the effort the next process starts with ("" for the CLI's
// default).
func (s *Session) Effort() Effort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Effort
}

// AdoptEffort changes the effort the next process starts with, without
// asking the live one.
func (s *Session) AdoptEffort(e Effort) error {
	if err := checkEffort(e); err != nil {
		return fmt.Errorf("adopt effort: %w", err)
	}
	s.mu.Lock()
	s.cfg.Effort = e
	s.mu.Unlock()
	return nil
}

// EffortChange is what SetEffort did to the live process.
type EffortChange struct {
	// Live: a live process took the change. False: there was none, and
	// only the next spawn's --effort changes.
	Live bool
	// Applied is the level the live process now sends to the API, read
	// back from it; "" with Supported false when its model takes no
	// effort level. Meaningful only when Live.
	Applied   Effort
	Supported bool
}

// SetEffort changes the effort of the live process at once and of every
// later one ("" goes back to the model's default). Whatever the live
// process answers, the next process starts with --effort=e.
//
// The live change is the control request apply_flag_settings
// {"settings":{"effortLevel":…}} (null for ""). The CLI answers success
// even for a value it ignores, so the level it really applies is read back
// with get_settings (AppliedEffort). It can differ from e: a model without
// effort levels applies none, and claude-opus-4-5 applies xhigh and max as
// high. An error after the request reached the process (a refusal wraps
// ErrControl) comes with Live false, or, when only the read-back failed,
// Live true and Applied unknown.
func (s *Session) SetEffort(ctx context.Context, e Effort) (EffortChange, error) {
	if err := checkEffort(e); err != nil {
		return EffortChange{}, fmt.Errorf("set effort: %w", err)
	}
	if err := s.AdoptEffort(e); err != nil {
		return EffortChange{}, err
	}
	var level any // JSON null: the model's default
	if e != "" {
		level = string(e)
	}
	_, err := s.request(ctx, "apply_flag_settings", map[string]any{"settings": map[string]any{"effortLevel": level}})
	switch {
	case errors.Is(err, ErrNoProcess):
		return EffortChange{}, nil
	case err != nil:
		return EffortChange{}, fmt.Errorf("set effort: %w", err)
	}
	applied, supported, err := s.AppliedEffort(ctx)
	if err != nil {
		return EffortChange{Live: true}, fmt.Errorf("set effort: %w", err)
	}
	return EffortChange{Live: true, Applied: applied, Supported: supported}, nil
}

// AppliedEffort asks the live process (get_settings) which effort it sends
// to the API now. supported is false when its model takes no effort level
// (then the request carries no output_config.effort at all).
func (s *Session) AppliedEffort(ctx context.Context) (applied Effort, supported bool, err error) {
	raw, err := s.request(ctx, "get_settings", nil)
	if err != nil {
		return "", false, fmt.Errorf("read applied effort: %w", err)
	}
	var resp struct {
		Applied *struct {
			Effort *string `json:"effort"`
		} `json:"applied"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return "", false, fmt.Errorf("read applied effort: decode get_settings: %w", err)
	}
	if resp.Applied == nil {
		return "", false, fmt.Errorf("read applied effort: %w: get_settings has no applied settings", ErrInvalidInput)
	}
	if resp.Applied.Effort == nil {
		return "", false, nil
	}
	e := Effort(*resp.Applied.Effort)
	if !e.Valid() {
		// A level this runner does not know (a newer CLI): never passed
		// on, so nothing shows a value untether could not set itself.
		return "", false, fmt.Errorf("read applied effort: %w: unknown level %.40q", ErrInvalidInput, *resp.Applied.Effort)
	}
	return e, true, nil
}

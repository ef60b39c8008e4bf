package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ContextUsage is how full the live process's context is, and what the CLI
// does by itself when it fills up, as the CLI reports it (get_context_usage).
type ContextUsage struct {
	Tokens int64 // what the context holds now
	Window int64 // the model's context window (or CLAUDE_CODE_AUTO_COMPACT_WINDOW)
	// Percent is the CLI's own rounding of Tokens/Window, 0–100.
	Percent float64
	// AutoCompact: the CLI compacts the conversation by itself before a
	// request once the context reaches AutoCompactAt tokens. False when
	// DISABLE_AUTO_COMPACT or DISABLE_COMPACT is set in its environment
	// or autoCompactEnabled is off in its settings.
	AutoCompact   bool
	AutoCompactAt int64
}

// AutoCompactPercent is AutoCompactAt as a share of Window, 0–100; 0 when
// the CLI does not compact by itself or the window is unknown.
func (u ContextUsage) AutoCompactPercent() float64 {
	if !u.AutoCompact || u.AutoCompactAt <= 0 || u.Window <= 0 {
		return 0
	}
	return 100 * float64(u.AutoCompactAt) / float64(u.Window)
}

// ContextUsage asks the live process how full its context is
// (get_context_usage). Without a process it returns an error wrapping
// ErrNoProcess. The answer's other fields (a breakdown by category, a grid
// for a terminal) are not decoded.
func (s *Session) ContextUsage(ctx context.Context) (ContextUsage, error) {
	raw, err := s.request(ctx, "get_context_usage", nil)
	if err != nil {
		return ContextUsage{}, fmt.Errorf("context usage: %w", err)
	}
	var r struct {
		TotalTokens          *int64   `json:"totalTokens"`
		MaxTokens            *int64   `json:"maxTokens"`
		Percentage           *float64 `json:"percentage"`
		AutoCompactThreshold *int64   `json:"autoCompactThreshold"`
		IsAutoCompactEnabled bool     `json:"isAutoCompactEnabled"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return ContextUsage{}, fmt.Errorf("context usage: decode get_context_usage: %w", err)
	}
	if r.TotalTokens == nil || r.MaxTokens == nil || *r.TotalTokens < 0 || *r.MaxTokens <= 0 {
		return ContextUsage{}, fmt.Errorf("context usage: %w: get_context_usage lacks totalTokens or maxTokens", ErrInvalidInput)
	}
	u := ContextUsage{Tokens: *r.TotalTokens, Window: *r.MaxTokens}
	if r.Percentage != nil {
		u.Percent = *r.Percentage
	} else {
		u.Percent = 100 * float64(u.Tokens) / float64(u.Window)
	}
	if r.IsAutoCompactEnabled && r.AutoCompactThreshold != nil && *r.AutoCompactThreshold > 0 {
		u.AutoCompact, u.AutoCompactAt = true, *r.AutoCompactThreshold
	}
	return u, nil
}

// CompactDisabled reports whether env (a CLI's configured environment)
// turns compaction off, as the CLI reads it (a value of 1, true, yes or on,
// in any case): DISABLE_COMPACT turns off /compact as well as automatic
// compaction (/compact then answers "/compact isn't available in this
// environment."), DISABLE_AUTO_COMPACT only the automatic one.
func CompactDisabled(env map[string]string) (manual, auto bool) {
	truthy := func(name string) bool {
		switch strings.ToLower(strings.TrimSpace(env[name])) {
		case "1", "true", "yes", "on":
			return true
		}
		return false
	}
	manual = truthy("DISABLE_COMPACT")
	return manual, manual || truthy("DISABLE_AUTO_COMPACT")
}

package config

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration written in the file as a Go duration string
// ("30s", "15m", "1h30m"). A bare number is rejected rather than guessed at,
// because "interval = 5" could mean seconds or nanoseconds.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration does, minus trailing zero units, so
// 30 minutes prints as "30m" (as a user would write it), not "30m0s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("invalid duration %q: want a Go duration string such as \"30s\", \"15m\" or \"1h30m\"", text)
	}
	*d = Duration(v)
	return nil
}

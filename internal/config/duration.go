package config

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written in the file as a Go duration string
// ("30s", "15m", "1h30m"). A bare number is rejected rather than guessed at,
// because "interval = 5" could mean seconds or nanoseconds.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d the way time.Duration does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

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

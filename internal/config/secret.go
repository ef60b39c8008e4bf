package config

import (
	"fmt"
	"log/slog"
	"reflect"
)

// redacted is what every printing path shows instead of a secret's value.
const redacted = "[redacted]"

// Secret holds a credential such as the bot token. Every way Go code commonly
// turns a value into text — fmt with any verb, encoding/json, encoding.TextMarshaler
// (and so TOML and zerolog's Interface/Any), fmt.Stringer (zerolog's Stringer)
// and log/slog — prints "[redacted]", so a config can be logged or wrapped into
// an error without leaking it. The only way to get the value is Reveal, which
// makes every real use greppable.
//
// The value lives in an unexported field so that a conversion like string(s)
// does not compile. Reflection-based dumpers that bypass methods (spew with
// DisableMethods, as testify uses in failure diffs) can still see it; keep
// real tokens out of tests.
type Secret struct {
	value string
}

// NewSecret wraps s. It exists for callers building a Config in code (tests,
// other packages); files and the environment go through Load.
func NewSecret(s string) Secret { return Secret{value: s} }

// Reveal returns the secret's value. Call it only where the value is sent to
// the service that needs it.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether no secret is set.
func (s Secret) IsZero() bool { return s.value == "" }

// String implements fmt.Stringer.
func (s Secret) String() string { return redacted }

// GoString implements fmt.GoStringer, covering %#v.
func (s Secret) GoString() string { return redacted }

// Format implements fmt.Formatter. Without it, verbs that fmt does not route
// through String (%d, %x on structs, …) would print the struct's fields.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalText implements encoding.TextMarshaler; TOML encoders and zerolog's
// reflection path use it.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// MarshalJSON implements json.Marshaler so a Config logged as JSON is safe.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// UnmarshalText implements encoding.TextUnmarshaler. It never fails: a failure
// here would become a decode error, and decode errors quote the value.
func (s *Secret) UnmarshalText(text []byte) error {
	s.value = string(text)
	return nil
}

// Secrets returns the value of every secret the config holds (the bot
// token, the voice API key, the triggers' secrets, and any key of type
// Secret added later, also in a list section), for the log redactor.
// Empty ones are left out.
func (c *Config) Secrets() []string {
	var out []string
	add := func(v reflect.Value) {
		if s, ok := v.Interface().(Secret); ok && !s.IsZero() {
			out = append(out, s.Reveal())
		}
	}
	for _, f := range c.fields() {
		if f.value.Kind() != reflect.Slice {
			add(f.value)
			continue
		}
		for i := range f.value.Len() { // [[schedules]], [[triggers]]
			if e := f.value.Index(i); e.Kind() == reflect.Struct {
				for j := range e.NumField() {
					add(e.Field(j))
				}
			}
		}
	}
	return out
}

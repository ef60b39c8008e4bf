package logx

import (
	"bytes"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Format selects the output encoding.
type Format string

// Formats.
const (
	FormatAuto    Format = "auto" // console on a terminal, JSON otherwise
	FormatJSON    Format = "json"
	FormatConsole Format = "console"
)

// New returns a logger writing to out, with secrets redacted, and sets the
// level process-wide (SetLevel), so a reload changes it for every logger
// derived from this one. The redactor is returned so a reload can add the
// secrets it brings.
func New(level string, format Format, out *os.File, secrets ...string) (zerolog.Logger, *Redactor) {
	SetLevel(level)
	r := NewRedactor(out, secrets...)
	var w io.Writer = r
	if format == FormatConsole || (format == FormatAuto && isatty.IsTerminal(out.Fd())) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).With().Timestamp().Logger(), r
}

// SetLevel sets the minimum level logged ("info" when unknown). It is safe
// to call at any time.
func SetLevel(level string) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	zerolog.SetGlobalLevel(lvl)
}

// Redactor replaces every occurrence of a secret in what it writes with
// "[redacted]". It is the last line of defence: code should never log a
// secret, but an error from a library (go-telegram/bot puts the token in
// request URLs) might.
type Redactor struct {
	mu      sync.Mutex
	out     io.Writer
	secrets [][]byte
}

// NewRedactor wraps out. Empty secrets are ignored.
func NewRedactor(out io.Writer, secrets ...string) *Redactor {
	r := &Redactor{out: out}
	r.Add(secrets...)
	return r
}

// Add redacts secrets from now on too (a reload's new token or key); the
// ones it had stay redacted. Empty ones and repeats are ignored.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if s != "" && !slices.ContainsFunc(r.secrets, func(have []byte) bool { return string(have) == s }) {
			r.secrets = append(r.secrets, []byte(s))
		}
	}
}

var redacted = []byte("[redacted]")

// Write writes p with secrets replaced. It reports len(p) on success so
// callers do not see a short write when the replacement changes the size.
func (r *Redactor) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, redacted)
		}
	}
	if _, err := r.out.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

package config

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Key is the dotted TOML key the problem is about, e.g. "claude.workdir".
	Key string
	// Message says what is wrong and, where it helps, what to do. It never
	// contains the bot token.
	Message string
}

func (p Problem) String() string { return p.Key + ": " + p.Message }

// ValidationError lists every problem found in a configuration, sorted by key,
// so one run shows the user everything to fix. Unknown keys are reported here
// too. Check for it with errors.As.
type ValidationError struct {
	// Path is the file the configuration came from; empty for Parse.
	Path     string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration")
	if e.Path != "" {
		b.WriteString(" in ")
		b.WriteString(e.Path)
	}
	fmt.Fprintf(&b, " (%d %s):", len(e.Problems), plural(len(e.Problems), "problem", "problems"))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// problems collects Problems during validation.
type problems []Problem

func (ps *problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

// has reports whether a problem was already recorded for key; later checks
// skip such keys so one mistake is not reported twice.
func (ps problems) has(key string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Key == key })
}

// err returns nil if nothing was collected, else a *ValidationError with the
// problems in a deterministic order (by key, then message).
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	sorted := slices.Clone([]Problem(ps))
	slices.SortStableFunc(sorted, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Message, b.Message))
	})
	return &ValidationError{Problems: sorted}
}

// DecodeError is a TOML syntax error or a value of the wrong type: the file
// could not be read into a Config at all, so validation did not run.
//
// It deliberately does not wrap the toml package's error: that error keeps
// the whole input and can print the offending source line, which may be the
// bot token's. Message is scrubbed of anything token-shaped.
type DecodeError struct {
	// Path is the file; empty for Parse.
	Path string
	// Line and Column are 1-based; 0 when the decoder did not say.
	Line, Column int
	// Key is the last key the decoder saw, if any.
	Key string
	// Message is the decoder's description of the problem.
	Message string
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(cmp.Or(e.Path, "config"))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Message)
	return b.String()
}

// tomlErrPrefix matches the prefix the toml package puts on errors it does not
// return as ParseError (type mismatches): "toml: line N (last key "k"): ".
var tomlErrPrefix = regexp.MustCompile(`^toml: (?:line (\d+) )?(?:\(last key ("(?:[^"\\]|\\.)*")\): )?`)

// tokenShape matches a bot token or its secret half in free text. The id part
// alone is public (it is the bot's user id), so a short tail is left alone.
var tokenShape = regexp.MustCompile(`[0-9]*:[A-Za-z0-9_-]{8,}`)

// newDecodeError converts a toml decode error, scrubbing token-shaped text and
// the known token (from the environment) out of the message.
func newDecodeError(err error, knownToken string) *DecodeError {
	de := &DecodeError{}
	var pe toml.ParseError
	if errors.As(err, &pe) {
		de.Line, de.Column, de.Key, de.Message = pe.Position.Line, pe.Position.Col, pe.LastKey, pe.Message
	} else {
		msg := err.Error()
		if m := tomlErrPrefix.FindStringSubmatchIndex(msg); m != nil {
			if m[2] >= 0 {
				de.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
			}
			if m[4] >= 0 {
				de.Key, _ = strconv.Unquote(msg[m[4]:m[5]])
			}
			msg = msg[m[1]:]
		}
		de.Message = msg
	}
	if knownToken != "" {
		de.Message = strings.ReplaceAll(de.Message, knownToken, redacted)
	}
	de.Message = tokenShape.ReplaceAllString(de.Message, redacted)
	if k := strings.Split(de.Key, "."); strings.EqualFold(k[len(k)-1], "bot_token") {
		// The lexer quotes what it found, which here is (part of) the token,
		// possibly without its colon: hide every quoted fragment.
		de.Message = quotedFragment.ReplaceAllString(de.Message, `"`+redacted+`"`)
		de.Message += "; the token must be a double-quoted string"
	}
	return de
}

// quotedFragment matches a double-quoted string in a decoder message.
var quotedFragment = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

package voice

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Audio is what is transcribed.
type Audio struct {
	Data []byte
	// Name is a file name whose extension says the format ("voice.ogg",
	// "note.mp4"); endpoints use it to decode.
	Name     string
	MimeType string
}

// Transcriber turns speech into text.
type Transcriber interface {
	Transcribe(ctx context.Context, a Audio) (string, error)
}

// ErrEmpty means the backend answered, but with no words.
var ErrEmpty = errors.New("the transcript is empty (no speech recognised)")

// ErrUnreachable means the endpoint could not be reached or did not answer
// in time.
var ErrUnreachable = errors.New("the transcription service did not answer")

// HTTPError is an answer of the endpoint other than 200.
type HTTPError struct {
	Status int
	// Message is the endpoint's own explanation, cut short.
	Message string
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("the transcription service answered HTTP %d", e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// CommandError is a failure of the conversion or of the command.
type CommandError struct {
	Step   string // "ffmpeg" or the program's name
	Err    error
	Stderr string // its last lines
}

func (e *CommandError) Error() string {
	s := fmt.Sprintf("%s failed: %v", e.Step, e.Err)
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

func (e *CommandError) Unwrap() error { return e.Err }

// cleanTranscript trims a transcript and joins its lines: recognisers print
// one line per segment.
func cleanTranscript(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// lastLines returns at most n trailing lines of s, at most 300 bytes.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, " / ")
	if len(out) > 300 {
		out = "…" + out[len(out)-300:]
	}
	return out
}

// extOf is a file's extension without the dot, lower case.
func extOf(name string) string {
	return strings.ToLower(strings.TrimPrefix(filepath.Ext(name), "."))
}

package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Command is a local transcription program.
type Command struct {
	// Argv is the program and its arguments; "{wav}" in an argument is
	// replaced by the converted file's path.
	Argv   []string
	FFmpeg string // ffmpeg to run: a name on PATH or an absolute path
	// TempDir holds the files of one transcription; "" is os.TempDir().
	TempDir string
}

// maxTranscript bounds what the program may print.
const maxTranscript = 1 << 20

// Transcribe converts the audio to 16 kHz mono WAV with ffmpeg and runs
// the command on it.
func (c Command) Transcribe(ctx context.Context, a Audio) (string, error) {
	if len(c.Argv) == 0 {
		return "", errors.New("no transcription command is configured")
	}
	dir, err := os.MkdirTemp(c.TempDir, "untether-voice-*")
	if err != nil {
		return "", fmt.Errorf("make a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	ext := extOf(a.Name)
	if ext == "" {
		ext = "ogg"
	}
	in := filepath.Join(dir, "in."+ext)
	wav := filepath.Join(dir, "voice.wav")
	if err := os.WriteFile(in, a.Data, 0o600); err != nil {
		return "", fmt.Errorf("write the audio: %w", err)
	}
	ffmpeg := c.FFmpeg
	if ffmpeg == "" {
		ffmpeg = "ffmpeg"
	}
	// -vn drops a video note's picture; 16 kHz mono is what speech
	// recognisers (whisper.cpp, pocketsphinx, vosk) expect.
	if _, err := run(ctx, "ffmpeg", ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-i", in, "-vn", "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", "-f", "wav", wav); err != nil {
		return "", err
	}
	args := make([]string, len(c.Argv)-1)
	for i, arg := range c.Argv[1:] {
		args[i] = strings.ReplaceAll(arg, "{wav}", wav)
	}
	out, err := run(ctx, filepath.Base(c.Argv[0]), c.Argv[0], args...)
	if err != nil {
		return "", err
	}
	text := cleanTranscript(out)
	if text == "" {
		return "", ErrEmpty
	}
	return text, nil
}

// run runs a program, returning its stdout; a failure carries the tail of
// its stderr.
func run(ctx context.Context, step, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitedBuffer{b: &stdout, n: maxTranscript}
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 64 << 10}
	cmd.WaitDelay = 2 * time.Second // a child holding the pipes open must not hang us
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out: %w", ctx.Err())
		}
		return "", &CommandError{Step: step, Err: err, Stderr: lastLines(stderr.String(), 3)}
	}
	return stdout.String(), nil
}

// limitedBuffer keeps the first n bytes written and discards the rest, so
// a chatty program cannot exhaust memory.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

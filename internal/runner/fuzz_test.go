package runner

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// The fuzz targets are seeded from the real CLI captures in
// testdata/transcripts; `go test` runs the seeds, `go test -fuzz=FuzzX`
// explores from them.

// transcriptPaths lists the captures in testdata/transcripts.
func transcriptPaths(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no transcripts: %v", err)
	}
	return paths
}

func transcriptSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, p := range transcriptPaths(f) {
		seeds = append(seeds, bytes.Join(transcriptOutLines(f, p), []byte("\n")))
	}
	return seeds
}

// FuzzLineReader: any byte stream splits into the lines it holds, none
// over the limit, and a line over it stops the reader with ErrLineTooLong.
func FuzzLineReader(f *testing.F) {
	for _, s := range transcriptSeeds(f) {
		f.Add(s, uint16(4096))
	}
	f.Add([]byte("a\r\nb\n\nc"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max) + 1
		lr := newLineReader(bytes.NewReader(data), limit)
		var got [][]byte
		for {
			line, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(line) > limit {
				t.Fatalf("line of %d bytes over the limit %d", len(line), limit)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line holds a newline: %q", line)
			}
			got = append(got, bytes.Clone(line))
		}
		// Without an error, the lines are the input's; a newline-terminated
		// one loses a "\r" before its newline.
		var want [][]byte
		for rest := data; len(rest) > 0; {
			line, after, found := bytes.Cut(rest, []byte("\n"))
			if found {
				line = bytes.TrimSuffix(line, []byte("\r"))
			}
			want, rest = append(want, line), after
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzDecodeTranslate: any sequence of stdout lines goes through the
// decoder and one translator without a panic, and nothing is dropped
// silently: a line that does not decode yields an Unknown or a Warning.
func FuzzDecodeTranslate(f *testing.F) {
	for _, s := range transcriptSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := NewTranslator(0)
		var evs []Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			fr, err := decodeLine(line)
			evs = decodeEvents(tr, fr, err, line, evs[:0])
			if err == nil {
				continue
			}
			reported := false
			for _, ev := range evs {
				switch ev.(type) {
				case Unknown, Warning:
					reported = true
				}
			}
			if !reported {
				t.Fatalf("decode error %v on %q reported no Unknown or Warning", err, line)
			}
		}
	})
}

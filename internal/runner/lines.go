package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one CLI stdout line. The largest real frames are tool
// results carrying base64 images (a few MiB); a line past this is a CLI
// gone wrong, and reading on would grow memory without bound.
const MaxLineBytes = 64 << 20

// ErrLineTooLong means the CLI printed a stdout line over the limit; the
// process is killed and the session resumes with the next message.
var ErrLineTooLong = errors.New("CLI stdout line too long")

// lineReader reads newline-terminated lines up to a maximum length.
// bufio.Scanner is not used: its token buffer is allocated up front for the
// maximum, while almost every line is small.
type lineReader struct {
	r   *bufio.Reader
	max int
	big []byte // reused for lines longer than the bufio buffer
}

// maxRetainedLine bounds the scratch buffer kept between lines, so one huge
// image does not pin megabytes for the life of the process.
const maxRetainedLine = 1 << 20

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. The slice is valid until
// the next call. At EOF a final unterminated line is returned first. A line
// longer than max yields an error wrapping ErrLineTooLong, after at most
// max bytes of it were buffered; the reader is unusable afterwards.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == nil {
		return l.check(trimEOL(line))
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return l.check(trimEOL(line))
		}
		return nil, err
	}
	if cap(l.big) > maxRetainedLine {
		l.big = nil
	}
	l.big = append(l.big[:0], line...)
	for {
		if len(l.big) > l.max+2 { // +2: the line's own "\r\n" does not count
			n := len(l.big)
			l.big = nil
			return nil, fmt.Errorf("%w: more than %d bytes (read %d so far)", ErrLineTooLong, l.max, n)
		}
		line, err = l.r.ReadSlice('\n')
		l.big = append(l.big, line...)
		if err == nil {
			return l.check(trimEOL(l.big))
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && len(l.big) > 0 {
				return l.check(trimEOL(l.big))
			}
			return nil, err
		}
	}
}

func (l *lineReader) check(line []byte) ([]byte, error) {
	if len(line) > l.max {
		l.big = nil
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrLineTooLong, len(line), l.max)
	}
	return line, nil
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

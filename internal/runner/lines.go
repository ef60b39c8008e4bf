package runner

import (
	"bufio"
	"errors"
	"io"
)

// lineReader reads newline-terminated lines of any length. bufio.Scanner is
// not used: its token limit would fail on the multi-megabyte lines the CLI
// prints for base64 images in tool results.
type lineReader struct {
	r   *bufio.Reader
	big []byte // reused for lines longer than the bufio buffer
}

// maxRetainedLine bounds the scratch buffer kept between lines, so one huge
// image does not pin megabytes for the life of the process.
const maxRetainedLine = 1 << 20

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline. The slice is valid until
// the next call. At EOF a final unterminated line is returned first.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == nil {
		return trimEOL(line), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return trimEOL(line), nil
		}
		return nil, err
	}
	if cap(l.big) > maxRetainedLine {
		l.big = nil
	}
	l.big = append(l.big[:0], line...)
	for {
		line, err = l.r.ReadSlice('\n')
		l.big = append(l.big, line...)
		if err == nil {
			return trimEOL(l.big), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && len(l.big) > 0 {
				return trimEOL(l.big), nil
			}
			return nil, err
		}
	}
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

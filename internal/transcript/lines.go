package transcript

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds on what one call reads, so a 2 GB transcript or a directory of
// 5000 sessions costs a bounded, small amount of I/O and memory.
const (
	// maxLine is the longest line decoded; a longer one (a huge pasted
	// prompt, a giant tool result) is skipped without being held in memory.
	maxLine = 8 << 20
	// maxScan bounds the bytes one Since or Export reads.
	maxScan = 64 << 20
	// headScan and tailScan bound List's reads of a file it does not read
	// whole.
	headScan = 1 << 20
	tailScan = 256 << 10
)

// span is what a scan covered.
type span struct {
	// end is the offset just past the last complete line read: a partial
	// last line (one the CLI is still writing) is never consumed.
	end int64
	// truncated is set when the byte budget ran out before the file did.
	truncated bool
	// skipped counts complete lines longer than maxLine.
	skipped int
}

// errStop, returned by a scan's callback, ends the scan early without error.
var errStop = errors.New("stop scan")

// scan reads the complete lines of f in [start, size), at most budget
// bytes of them, and calls fn with each line's offset and bytes (without the
// newline; valid only during the call). A line longer than maxLine is
// counted in span.skipped and not passed. With align, a start that is not
// just after a newline first skips to the next line, so a scan can begin in
// the middle of a file.
func scan(f *os.File, start, size, budget int64, align bool, fn func(at int64, line []byte) error) (span, error) {
	sp := span{end: start}
	if start >= size {
		return sp, nil
	}
	stop := size
	if budget > 0 && start+budget < size {
		stop, sp.truncated = start+budget, true
	}
	if align && start > 0 {
		var prev [1]byte
		if _, err := f.ReadAt(prev[:], start-1); err != nil {
			return sp, fmt.Errorf("read transcript at %d: %w", start-1, err)
		}
		align = prev[0] != '\n'
	} else {
		align = false
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, start, stop-start), 64<<10)
	var (
		buf  []byte
		n    int64 // bytes of the current line so far, newline included
		long bool  // the current line is over maxLine: not kept
	)
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !long {
			if len(buf)+len(chunk) > maxLine+1 {
				long, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			// A partial last line: left for a later scan, once it is whole.
			return sp, nil
		case err != nil:
			return sp, fmt.Errorf("read transcript: %w", err)
		}
		lineAt := sp.end
		sp.end += n
		switch {
		case align:
			align = false
		case long:
			sp.skipped++
		default:
			if err := fn(lineAt, buf[:len(buf)-1]); err != nil {
				if errors.Is(err, errStop) {
					return sp, nil
				}
				return sp, err
			}
		}
		buf, n, long = buf[:0], 0, false
	}
}

package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular means a transcript path names something other than a
// regular file: a symlink (never followed, so a link planted in the
// directory cannot make untether read a file elsewhere), a FIFO (opened
// without blocking, then refused), a directory or a device.
var ErrNotRegular = errors.New("not a regular file")

// open opens path for reading without following a symlink in its last
// component and without blocking on a FIFO, and returns it only if it is a
// regular file, with its fstat (not a second lookup by name, which a rename
// could race).
func open(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if isSymlinkRefusal(err) {
			return nil, nil, fmt.Errorf("open transcript %s: %w (a symlink)", path, ErrNotRegular)
		}
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat transcript: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("open transcript %s: %w (mode %v)", path, ErrNotRegular, st.Mode().Type())
	}
	return f, st, nil
}

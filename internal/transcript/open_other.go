//go:build !unix

package transcript

import (
	"errors"
	"fmt"
	"os"
)

// openNoFollow, where O_NOFOLLOW does not exist, refuses a symlink by an
// Lstat first; the fstat check after opening still refuses anything that
// is not a regular file.
func openNoFollow(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", path, errSymlink)
	}
	return os.Open(path)
}

var errSymlink = errors.New("symlink refused")

func isSymlinkRefusal(err error) bool { return errors.Is(err, errSymlink) }

func identity(os.FileInfo) (dev, ino uint64) { return 0, 0 }

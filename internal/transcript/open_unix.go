//go:build unix

package transcript

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens with O_NOFOLLOW (ELOOP on a symlink) and O_NONBLOCK
// (a FIFO opens at once instead of waiting for a writer); reads of a
// regular file are unaffected by O_NONBLOCK.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

func isSymlinkRefusal(err error) bool { return errors.Is(err, syscall.ELOOP) }

// identity is what tells one file from another that replaced it at the
// same path.
func identity(st os.FileInfo) (dev, ino uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}

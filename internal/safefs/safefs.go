package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Errors of what was found where a directory or regular file was wanted.
// They come wrapped in an *fs.PathError naming the path, relative to the
// directory it was opened from.
var (
	ErrSymlink    = errors.New("is a symbolic link")
	ErrNotDir     = errors.New("is not a directory")
	ErrNotRegular = errors.New("is not a regular file")
)

// Dir is an open directory, reached from its base without following any
// link. It must be closed.
type Dir struct {
	fd   int
	name string // for messages: the base joined with the path walked
}

// OpenBase opens base, the directory everything else is found below. It
// follows links: it is the operator's path, not one a tool chose.
func OpenBase(base string) (*Dir, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	return &Dir{fd: fd, name: base}, nil
}

// OpenDir opens rel below base (see [Dir.Sub]).
func OpenDir(base, rel string, create bool) (*Dir, error) {
	b, err := OpenBase(base)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Sub(rel, create)
}

// Name is the directory's path, for messages.
func (d *Dir) Name() string { return d.name }

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Sub opens the directory rel (slash-separated, local: no "..", not
// absolute) below d, one component at a time, refusing any component that
// is a link or not a directory. With create, missing directories are made
// (mode 0700) on the way. "." opens d again.
func (d *Dir) Sub(rel string, create bool) (*Dir, error) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(rel) && rel != "." {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrInvalid}
	}
	cur, err := retry(func() (int, error) { return unix.Dup(d.fd) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.name, Err: err}
	}
	unix.CloseOnExec(cur)
	if rel == "." {
		return &Dir{fd: cur, name: d.name}, nil
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		next, err := openDirAt(cur, p, create)
		unix.Close(cur)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: strings.Join(parts[:i+1], "/"), Err: err}
		}
		cur = next
	}
	return &Dir{fd: cur, name: filepath.Join(d.name, filepath.FromSlash(rel))}, nil
}

// openDirAt opens the directory name in dirfd without following a link.
func openDirAt(dirfd int, name string, create bool) (int, error) {
	open := func() (int, error) {
		return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	fd, err := retry(open)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(dirfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = retry(open)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return -1, classify(dirfd, name, ErrNotDir)
	}
	return fd, err
}

// classify says what name in dirfd is, when it is not what was wanted.
func classify(dirfd int, name string, otherwise error) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	return otherwise
}

// Open opens the regular file name (one component) in d for reading:
// without following a link, without blocking on a FIFO or a device, and
// only when fstat on the descriptor says it is a regular file.
func (d *Dir) Open(name string) (*os.File, error) {
	if err := oneComponent(name); err != nil {
		return nil, err
	}
	fd, err := retry(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, &fs.PathError{Op: "open", Path: name, Err: classify(d.fd, name, ErrNotRegular)}
	case errors.Is(err, unix.ENXIO), errors.Is(err, unix.EOPNOTSUPP):
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular} // a socket
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	// Reads of a regular file never block anyway; clear the flag so the
	// descriptor behaves like any other file's.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.name, name)), nil
}

// OpenFile opens the regular file rel below d: its directory with
// [Dir.Sub], the file with [Dir.Open].
func (d *Dir) OpenFile(rel string) (*os.File, error) {
	rel = path.Clean(filepath.ToSlash(rel))
	dir, name := path.Split(rel)
	if dir == "" {
		return d.Open(name)
	}
	sub, err := d.Sub(dir, false)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	f, err := sub.Open(name)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = rel
	}
	return f, err
}

// Create makes a new regular file name in d (mode 0600), open for reading
// and writing; it fails when anything, a link included, is already there.
func (d *Dir) Create(name string) (*os.File, error) {
	if err := oneComponent(name); err != nil {
		return nil, err
	}
	fd, err := retry(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.name, name)), nil
}

// Lstat describes name (one component) in d, without following a link.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := oneComponent(name); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return &fileInfo{name: name, st: st}, nil
}

// Names lists up to n entries of d (all when n <= 0), in no order.
func (d *Dir) Names(n int) ([]string, error) {
	fd, err := retry(func() (int, error) { return unix.Dup(d.fd) })
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: err}
	}
	unix.CloseOnExec(fd)
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.name)
	defer f.Close()
	names, err := f.Readdirnames(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return names, err
}

// Rename moves name in d to newName in to, never replacing what is there
// (renameat2 RENAME_NOREPLACE; where the file system lacks it, renameat
// after checking that newName is free).
func (d *Dir) Rename(name string, to *Dir, newName string) error {
	if err := oneComponent(name); err != nil {
		return err
	}
	if err := oneComponent(newName); err != nil {
		return err
	}
	err := unix.Renameat2(d.fd, name, to.fd, newName, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		var st unix.Stat_t
		if serr := unix.Fstatat(to.fd, newName, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
			err = unix.EEXIST
		} else {
			err = unix.Renameat(d.fd, name, to.fd, newName)
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.name, name), New: filepath.Join(to.name, newName), Err: err}
	}
	return nil
}

// Remove unlinks the file or link name in d; it never removes a directory.
func (d *Dir) Remove(name string) error {
	if err := oneComponent(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.name, name), Err: err}
	}
	return nil
}

func oneComponent(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

// retry repeats a system call interrupted by a signal.
func retry(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// fileInfo is an fs.FileInfo from fstatat.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Sec, fi.st.Mtim.Nsec) }

func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

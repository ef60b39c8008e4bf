package owndir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Uploads are saved under <workdir>/.untether/uploads, reached through
// safefs (own_dirs.go): no name a user sends, and no link planted in the
// workdir (not even one that stays inside it), can make a write land
// outside that directory, and a .untether or uploads that is not a real
// directory is refused. Each file gets a new name (O_EXCL, O_NOFOLLOW), so
// nothing is ever overwritten, and uploads older than [files] keep are
// pruned at start and once a day.

// Uploads is where uploads go, relative to the workdir.
const Uploads = ".untether/uploads"

// Name limits, in bytes: the whole name stays far below the 255 bytes most
// file systems allow.
const (
	MaxUploadBase = 120
	maxUploadExt  = 16
)

// UploadName makes a file name safe to create from the one a user sent:
// letters and digits of any script are kept (a Russian or Chinese name stays
// readable), everything else (separators, control and format characters
// such as right-to-left overrides, spaces) becomes "_". The extension is
// kept apart so capping the length never cuts it off.
func UploadName(original string) (base, ext string) {
	original = filepath.Base(strings.ReplaceAll(original, "\\", "/"))
	base, ext = original, filepath.Ext(original)
	letterOrDigit := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	if len(ext) > 1 && len(ext) <= maxUploadExt+1 && ext != original && strings.IndexFunc(ext[1:], func(r rune) bool { return !letterOrDigit(r) }) < 0 {
		base = strings.TrimSuffix(original, ext)
	} else {
		ext = ""
	}
	base = clean(base, func(r rune) bool {
		return letterOrDigit(r) || unicode.IsMark(r) || r == '-' || r == '_' || r == '.'
	})
	base = strings.Trim(base, "._")
	for len(base) > MaxUploadBase {
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
	}
	if base == "" {
		base = "file"
	}
	return base, ext
}

// clean keeps the runes ok accepts and turns each run of others into "_".
func clean(s string, ok func(rune) bool) string {
	var b strings.Builder
	lastBad := false
	for _, r := range s {
		if r != utf8.RuneError && ok(r) {
			b.WriteRune(r)
			lastBad = false
		} else if !lastBad {
			b.WriteByte('_')
			lastBad = true
		}
	}
	return b.String()
}

// ErrWorkdirGone: the project directory no longer exists. untether never
// recreates it: a path that reappears empty would hide the mistake.
var ErrWorkdirGone = errors.New("the project directory does not exist")

// SaveUpload writes what r yields (at most limit bytes, else ErrTooBig and
// nothing is kept) to a new file named after original and received, and
// returns its absolute path and size.
func SaveUpload(workdir, original string, r io.Reader, limit int64, received time.Time) (string, int64, error) {
	up, err := Open(workdir, Uploads, true)
	if err != nil {
		return "", 0, fmt.Errorf("save the file: %w", err)
	}
	defer up.Close()
	base, ext := UploadName(original)
	stamp := received.UTC().Format("20060102-150405")
	var (
		f    *os.File
		name string
	)
	for i := 1; ; i++ {
		name = stamp + "-" + base + ext
		if i > 1 {
			name = stamp + "-" + base + "-" + strconv.Itoa(i) + ext
		}
		f, err = up.Create(name)
		if !errors.Is(err, fs.ErrExist) || i >= 1000 {
			break
		}
	}
	if err != nil {
		return "", 0, fmt.Errorf("save the file: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = ErrTooBig
	}
	if err != nil {
		_ = up.Remove(name)
		if errors.Is(err, ErrTooBig) {
			return "", 0, err
		}
		return "", 0, fmt.Errorf("save the file: %w", err)
	}
	return filepath.Join(workdir, Uploads, name), n, nil
}

// PruneUploads deletes regular files in workdir's uploads directory older
// than keep, and returns how many. A missing workdir or uploads directory
// is not an error (and is not created).
func PruneUploads(workdir string, keep time.Duration, now time.Time) (int, error) {
	return PruneDir(workdir, Uploads, keep, now)
}

// PruneDir deletes the regular files (and symbolic links) in dir, relative
// to workdir, older than keep; see PruneUploads. The directory is reached
// through safefs: one that is a link, or below one, is refused, never
// pruned. A directory in it is never removed (unlinkat removes files and
// links only, even if an entry turned into a directory meanwhile).
func PruneDir(workdir, rel string, keep time.Duration, now time.Time) (int, error) {
	up, err := Open(workdir, rel, false)
	if errors.Is(err, ErrWorkdirGone) || errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", rel, err)
	}
	defer up.Close()
	names, err := up.Names(0)
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", rel, err)
	}
	cutoff := now.Add(-keep)
	removed := 0
	var errs []error
	for _, name := range names {
		info, err := up.Lstat(name)
		if err != nil || !(info.Mode().IsRegular() || info.Mode()&fs.ModeSymlink != 0) || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := up.Remove(name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune %s: %w", rel, err)
	}
	return removed, nil
}

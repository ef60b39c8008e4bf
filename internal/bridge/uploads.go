package bridge

import (
	"context"
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

// Uploads are saved under <workdir>/.untether/uploads through os.Root: no
// name a user sends, and no symlink planted in the workdir, can make a
// write land outside that directory. Each file gets a new name (O_EXCL), so
// nothing is ever overwritten, and uploads older than [files] keep are
// pruned at start and once a day.

// uploadsDir is where uploads go, relative to the workdir.
const uploadsDir = ".untether/uploads"

// Name limits, in bytes: the whole name stays far below the 255 bytes most
// file systems allow.
const (
	maxUploadBase = 120
	maxUploadExt  = 16
)

// uploadName makes a file name safe to create from the one a user sent:
// letters and digits of any script are kept (a Russian or Chinese name stays
// readable), everything else (separators, control and format characters
// such as right-to-left overrides, spaces) becomes "_". The extension is
// kept apart so capping the length never cuts it off.
func uploadName(original string) (base, ext string) {
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
	for len(base) > maxUploadBase {
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

// errWorkdirGone: the project directory no longer exists. untether never
// recreates it: a path that reappears empty would hide the mistake.
var errWorkdirGone = errors.New("the project directory does not exist")

// openUploads opens the uploads directory of workdir as a root, creating it
// (but never the workdir itself) if needed.
func openUploads(workdir string, create bool) (*os.Root, error) {
	return openDirIn(workdir, uploadsDir, create)
}

// openDirIn opens dir (relative to workdir) as a root, creating it (but
// never the workdir itself) if needed.
func openDirIn(workdir, rel string, create bool) (*os.Root, error) {
	root, err := os.OpenRoot(workdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (was it moved or deleted?)", errWorkdirGone, workdir)
	}
	if err != nil {
		return nil, fmt.Errorf("open the project directory: %w", err)
	}
	defer root.Close()
	if create {
		if err := root.MkdirAll(rel, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", rel, err)
		}
	}
	up, err := root.OpenRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	return up, nil
}

// saveUpload writes what r yields (at most limit bytes, else errTooBig and
// nothing is kept) to a new file named after original and received, and
// returns its absolute path and size.
func saveUpload(workdir, original string, r io.Reader, limit int64, received time.Time) (string, int64, error) {
	up, err := openUploads(workdir, true)
	if err != nil {
		return "", 0, fmt.Errorf("save the file: %w", err)
	}
	defer up.Close()
	base, ext := uploadName(original)
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
		f, err = up.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
		err = errTooBig
	}
	if err != nil {
		_ = up.Remove(name)
		if errors.Is(err, errTooBig) {
			return "", 0, err
		}
		return "", 0, fmt.Errorf("save the file: %w", err)
	}
	return filepath.Join(workdir, uploadsDir, name), n, nil
}

// pruneUploads deletes regular files in workdir's uploads directory older
// than keep, and returns how many. A missing workdir or uploads directory
// is not an error (and is not created).
func pruneUploads(workdir string, keep time.Duration, now time.Time) (int, error) {
	return pruneDir(workdir, uploadsDir, keep, now)
}

// pruneDir deletes the regular files (and symbolic links) in dir, relative
// to workdir, older than keep; see pruneUploads.
func pruneDir(workdir, rel string, keep time.Duration, now time.Time) (int, error) {
	up, err := openDirIn(workdir, rel, false)
	if errors.Is(err, errWorkdirGone) || errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", rel, err)
	}
	defer up.Close()
	dir, err := up.Open(".")
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", rel, err)
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", rel, err)
	}
	cutoff := now.Add(-keep)
	removed := 0
	var errs []error
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !(info.Mode().IsRegular() || info.Mode()&fs.ModeSymlink != 0) || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := up.Remove(e.Name()); err != nil {
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

// startUploadPruner prunes old uploads now and then once a day, with the
// [files] keep of the moment (it is reloadable).
func (b *Bridge) startUploadPruner(ctx context.Context) (stop func()) {
	return b.daily(ctx, func(now time.Time) {
		cfg := b.Config()
		for _, dir := range projectDirs(cfg) { // projects.go
			n, err := pruneUploads(dir, cfg.Files.Keep.Std(), now)
			if err != nil {
				b.log.Warn().Err(err).Msg("prune old uploads")
			} else if n > 0 {
				b.log.Info().Int("files", n).Dur("keep", cfg.Files.Keep.Std()).Msg("pruned old uploads")
			}
		}
		b.prunePhone(cfg) // files_out.go
	})
}

package owndir

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sync"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/safefs"
)

const (
	// Root is untether's own directory in a project or worktree:
	// never a change of the user's (worktrees.go), never zipped (get.go).
	Root       = ".untether"
	OutboxRoot = ".untether/outbox"
	Sent       = ".untether/sent"
)

// untether's own directories in a project (.untether, and uploads, sent,
// outbox and outbox/<chat> in it) are writable by Claude's tools, so any
// of them may be a symbolic link (".untether/uploads -> .." once made the
// pruner delete project files, and "outbox/<chat> -> ../.." sent .env and
// moved .git) or a file. They are opened only through internal/safefs,
// which follows no link below the project directory and keeps the
// descriptor of each directory it opened: one that is not a real directory
// is refused, reported once (an error in the log, and a notice in each
// chat it stops), and left as it is. untether neither follows, replaces
// nor removes it.

// Error says one of untether's directories is not a real directory.
type Error struct {
	path string // absolute: the component refused
	err  error  // safefs.ErrSymlink or safefs.ErrNotDir
}

func (e *Error) Error() string {
	return e.path + " " + e.what() + "; untether uses only a real directory there, and leaves this one alone"
}

func (e *Error) what() string {
	if errors.Is(e.err, safefs.ErrSymlink) {
		return "is a symbolic link"
	}
	return "is not a directory"
}

func (e *Error) Unwrap() error { return e.err }

// Open opens rel, one of untether's directories in workdir (or in
// the state directory), creating what is missing when create. The workdir
// itself is never created.
func Open(workdir, rel string, create bool) (*safefs.Dir, error) {
	base, err := safefs.OpenBase(workdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (was it moved or deleted?)", ErrWorkdirGone, workdir)
	}
	if err != nil {
		return nil, fmt.Errorf("open the project directory: %w", err)
	}
	defer base.Close()
	d, err := base.Sub(rel, create)
	var pe *fs.PathError
	if (errors.Is(err, safefs.ErrSymlink) || errors.Is(err, safefs.ErrNotDir)) && errors.As(err, &pe) {
		return nil, &Error{path: filepath.Join(workdir, filepath.FromSlash(pe.Path)), err: pe.Err}
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	return d, nil
}

// Reports remembers which refusals were reported, so each is reported
// once: by refused path, the chats told (the zero key stands for the log).
type Reports struct {
	log  *zerolog.Logger
	mu   sync.Mutex
	seen map[string]map[state.ChatKey]bool
}

// NewReports reports refusals to log.
func NewReports(log *zerolog.Logger) *Reports { return &Reports{log: log} }

// first records that key was told about path and reports whether it is
// the first time.
func (o *Reports) first(path string, key state.ChatKey) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]map[state.ChatKey]bool{}
	}
	if o.seen[path] == nil {
		o.seen[path] = map[state.ChatKey]bool{}
	}
	if o.seen[path][key] {
		return false
	}
	o.seen[path][key] = true
	return true
}

// fine forgets the refusals of rel in workdir and of its parents, once it
// opened as it should: a link made again is reported again.
func (o *Reports) fine(workdir, rel string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := path.Clean(rel); p != "." && p != "/"; p = path.Dir(p) {
		delete(o.seen, filepath.Join(workdir, filepath.FromSlash(p)))
	}
}

// Refused reports whether err refused one of untether's directories,
// logging it as an error the first time for its path.
func (o *Reports) Refused(err error) bool {
	var od *Error
	if !errors.As(err, &od) {
		return false
	}
	if o.first(od.path, state.ChatKey{}) {
		o.log.Error().Str("path", od.path).Str("found", od.what()).
			Msg("Refused one of untether's own directories: it is not a real directory, so nothing is read, written, moved or deleted through it")
	}
	return true
}

// Open is the package's Open for a chat's delivery: a refusal is logged
// once, and a directory that opened clears the refusals of its path.
func (o *Reports) Open(workdir, rel string, create bool) (*safefs.Dir, error) {
	d, err := Open(workdir, rel, create)
	if err == nil {
		o.fine(workdir, rel)
	}
	o.Refused(err)
	return d, err
}

// TellChat reports whether chat key should be told of the refusal err
// (once per chat and path), recording that it now is.
func (o *Reports) TellChat(err error, key state.ChatKey) bool {
	var od *Error
	return errors.As(err, &od) && o.first(od.path, key)
}

// Path is the refused component, absolute.
func (e *Error) Path() string { return e.path }

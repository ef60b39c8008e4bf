package state

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound reports that the requested row does not exist.
	ErrNotFound = errors.New("state: not found")
	// ErrAlreadyDecided reports that an approval was decided before this
	// DecideApproval call; the earlier decision stands.
	ErrAlreadyDecided = errors.New("state: approval already decided")
	// ErrExists reports an insert whose key is already taken.
	ErrExists = errors.New("state: already exists")
	// ErrInvalid reports an argument the store refuses to persist.
	ErrInvalid = errors.New("state: invalid argument")
	// ErrCorrupt reports that the database file is not a usable SQLite
	// database. The operator should move it aside; the store never deletes it.
	ErrCorrupt = errors.New("state: database file is corrupt or not a database")
	// ErrSchemaTooNew reports a database written by a newer untether whose
	// schema this binary does not know; opening it could misread its data.
	ErrSchemaTooNew = errors.New("state: database schema is newer than this binary")
	// ErrStorage reports a write the database file could not take: the
	// disk is full, the file system went read-only or fails. Nothing of
	// that write was kept, the database stays consistent, and writes work
	// again once the cause is gone; no reopen is needed.
	ErrStorage = errors.New("state: the database could not be written")
	// ErrDiskFull is the ErrStorage of a full disk (SQLITE_FULL).
	ErrDiskFull = fmt.Errorf("%w: the disk is full", ErrStorage)
	// ErrReadOnly is the ErrStorage of a read-only file system or file.
	ErrReadOnly = fmt.Errorf("%w: the file system is read-only", ErrStorage)
)

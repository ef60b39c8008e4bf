package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
	sqlite3 "modernc.org/sqlite/lib"
)

// classifyWrite tags the errors of a storage that cannot take a write with
// ErrStorage (ErrDiskFull, ErrReadOnly), so the daemon can tell "the disk
// is full" from a bug and knows that the same write may work later.
// Anything else is returned unchanged.
func classifyWrite(err error) error {
	if err == nil || errors.Is(err, ErrStorage) {
		return err
	}
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return err
	}
	switch coded.Code() & 0xff { // primary code; extended codes are enabled
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return err
}

// InjectWriteFault makes every write call f first and fail with its error,
// if any, before touching the database: a full or read-only disk on demand,
// for fault tests. f runs under the write lock, so it must not call the
// store. Return ErrDiskFull (or an error wrapping it) to stand in for
// SQLITE_FULL. nil removes the fault. Reads are never affected, as on a
// real full disk.
func (s *Store) InjectWriteFault(f func() error) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

func (s *Store) injectedFault() error {
	f := s.fault.Load()
	if f == nil {
		return nil
	}
	return (*f)()
}

// CheckWritable makes a write that changes nothing in the end but does
// reach the file (a row inserted and deleted in one transaction), to learn
// whether the storage takes writes again after an ErrStorage. A no-op
// statement would prove nothing: SQLite writes nothing for it.
func (s *Store) CheckWritable(ctx context.Context) error {
	// update_id -1 is never a Telegram id, and HandledUpdatesAbove prunes
	// ids at or below the offset anyway.
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO handled_updates (update_id) VALUES (-1)`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM handled_updates WHERE update_id = -1`)
		return err
	})
	if err != nil {
		return fmt.Errorf("check that %s takes writes: %w", s.path, err)
	}
	return nil
}

// FreeBytes is the space left for the daemon on the file system holding
// the database, for the log line that reports a failed write.
func (s *Store) FreeBytes() (uint64, error) {
	var st unix.Statfs_t
	dir := filepath.Dir(s.path)
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

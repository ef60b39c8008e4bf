package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the cgo-free "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the database file Open creates inside its directory.
const FileName = "untether.db"

const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600

	// busyTimeout bounds how long a statement waits for another process
	// (an operator's sqlite3 shell, a second daemon by mistake) holding the
	// write lock. In-process writers never wait on it: they queue on
	// Store.writeSem instead.
	busyTimeout = 5 * time.Second

	// maxConns: SQLite admits one writer at a time whatever the pool size,
	// and Store serialises writes anyway, so extra connections only help
	// readers. WAL lets those readers run beside the writer, so a handful
	// lets chat actors read while one of them writes. Each connection has its
	// own page cache and file handles, hence small rather than unbounded; an
	// unbounded pool would also mean an unbounded number of SQLITE_BUSY
	// waiters if something external held the lock.
	maxConns = 4
)

// Store is the durable state of one daemon. Its methods are safe for
// concurrent use. Every write is committed before the method returns.
type Store struct {
	db   *sql.DB
	path string

	// writeSem (capacity 1) serialises writes in-process. SQLite would
	// serialise them too, but through its busy handler, which polls with
	// growing sleeps and no fairness; a Go-side queue hands the lock over
	// immediately and respects context cancellation while waiting.
	writeSem chan struct{}

	now   func() time.Time
	fault atomic.Pointer[func() error] // InjectWriteFault (health.go)
}

// Open opens (creating if needed) the state database in dir and brings its
// schema up to date. dir is created with mode 0700 and the database files
// are 0600 whatever the umask: they hold session ids and an audit log.
func Open(ctx context.Context, dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("open state: empty directory: %w", ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open state: resolve directory %q: %w", dir, err)
	}
	if err := ensureDir(abs); err != nil {
		return nil, err
	}
	path := filepath.Join(abs, FileName)
	if err := ensureFile(path); err != nil {
		return nil, err
	}

	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open state database %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	// Connections are cheap to keep and costly to reopen (pragmas, schema
	// parse), and SQLite has no server-side timeout to dodge.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	s := &Store{
		db:       db,
		path:     path,
		writeSem: make(chan struct{}, 1),
		now:      time.Now,
	}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open state database %s: %w", path, classify(err))
	}
	// SQLite gives -wal and -shm the main file's mode, bypassing the umask;
	// tightening them again costs nothing and covers files left over from
	// an older run with looser permissions.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(path+suffix, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = db.Close()
			return nil, fmt.Errorf("open state database %s: restrict %s: %w", path, suffix, err)
		}
	}
	return s, nil
}

// Close releases the database. SQLite checkpoints the WAL into the main file
// when the last connection closes, so a clean shutdown leaves one file.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close state database %s: %w", s.path, err)
	}
	return nil
}

// Path is the database file's absolute path, for logs and diagnostics.
func (s *Store) Path() string { return s.path }

// dsn builds the connection string. Pragmas go in the DSN rather than one
// Exec because they are per connection and the pool opens several.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// In WAL mode NORMAL syncs at checkpoints, not at every commit. A
	// committed transaction survives the daemon crashing or being killed
	// (the WAL is in the OS page cache); only an OS crash or power loss can
	// roll back the last few commits, and never corrupts the file. FULL
	// would fsync on every offset save and every outbox enqueue, which
	// costs milliseconds each on SD cards and cheap VPS disks; losing a few
	// seconds of state on power loss is reconciled at startup like any
	// other restart.
	q.Add("_pragma", "synchronous(NORMAL)")
	// BEGIN IMMEDIATE takes the write lock up front. A deferred transaction
	// that reads and then writes can fail with SQLITE_BUSY on the upgrade
	// without the busy handler being consulted.
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	// url.URL renders "file:///abs/path?..."; SQLite's URI parser accepts an
	// empty authority and decodes %-escapes, so odd characters in the state
	// directory cannot be mistaken for query parameters.
	return u.String()
}

func ensureDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return fmt.Errorf("open state: create directory %s: %w", dir, err)
		}
		// MkdirAll applied the umask; set the mode we mean.
		if err := os.Chmod(dir, dirMode); err != nil {
			return fmt.Errorf("open state: restrict directory %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("open state: inspect directory %s: %w", dir, err)
	case !info.IsDir():
		return fmt.Errorf("open state: %s exists and is not a directory: %w", dir, ErrInvalid)
	}
	// An existing directory keeps the mode its owner chose; the files
	// inside are 0600 regardless.
	return nil
}

// ensureFile creates the database file before SQLite does, so its mode is
// ours rather than SQLite's default (0644) filtered by the umask.
func ensureFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("open state: create database file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("open state: create database file %s: %w", path, err)
	}
	if err := os.Chmod(path, fileMode); err != nil {
		return fmt.Errorf("open state: restrict database file %s: %w", path, err)
	}
	return nil
}

// classify tags SQLite's "this is not a database" family with ErrCorrupt so
// the daemon can tell the operator to move the file aside rather than print
// a bare driver message.
func classify(err error) error {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff { // primary code; extended codes are enabled
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return err
}

// lockWrite takes the in-process write lock, giving up if ctx ends first.
func (s *Store) lockWrite(ctx context.Context) (unlock func(), err error) {
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for write lock: %w", ctx.Err())
	}
	if err := s.injectedFault(); err != nil {
		<-s.writeSem
		return nil, err
	}
	return func() { <-s.writeSem }, nil
}

// exec runs one write statement under the write lock. A single statement
// is its own transaction, so no BEGIN/COMMIT round trip is needed.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := s.db.ExecContext(ctx, query, args...)
	return res, classifyWrite(err)
}

// tx runs fn in a write transaction under the write lock, committing if fn
// returns nil and rolling back otherwise.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", classifyWrite(err))
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return classifyWrite(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", classifyWrite(err))
	}
	return nil
}

// Times are stored as Unix nanoseconds (INTEGER): exact round trips, cheap
// comparisons and ordering in SQL, and no dependence on the driver's time
// text formats. The zero time maps to 0 both ways.
func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// orNow returns t, or the store's clock if t is zero.
func (s *Store) orNow(t time.Time) time.Time {
	if t.IsZero() {
		return s.now()
	}
	return t
}

// limitArg turns "limit <= 0 means no limit" into SQLite's LIMIT -1.
func limitArg(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

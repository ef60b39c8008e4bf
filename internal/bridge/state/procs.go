package state

import (
	"context"
	"fmt"
	"time"
)

// CLIProc is a CLI process the daemon runs, recorded while it runs so that
// the next start can kill it if this instance died without stopping it.
type CLIProc struct {
	Tag       string // unique per process; the runner finds its tools by it
	PID       int
	StartTime uint64 // field 22 of /proc/<pid>/stat: with PID, safe against pid reuse
	StartedAt time.Time
}

// PutCLIProc records a running CLI process.
func (s *Store) PutCLIProc(ctx context.Context, p CLIProc) error {
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO cli_procs (tag, pid, start_time, started_at) VALUES (?, ?, ?, ?)`,
		p.Tag, p.PID, int64(p.StartTime), toNanos(s.orNow(p.StartedAt)))
	if err != nil {
		return fmt.Errorf("record CLI process %d: %w", p.PID, err)
	}
	return nil
}

// DeleteCLIProc forgets a CLI process that exited.
func (s *Store) DeleteCLIProc(ctx context.Context, tag string) error {
	if _, err := s.exec(ctx, `DELETE FROM cli_procs WHERE tag = ?`, tag); err != nil {
		return fmt.Errorf("forget CLI process %s: %w", tag, err)
	}
	return nil
}

// CLIProcs returns the recorded CLI processes, oldest first.
func (s *Store) CLIProcs(ctx context.Context) ([]CLIProc, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT tag, pid, start_time, started_at FROM cli_procs ORDER BY started_at, tag`)
	if err != nil {
		return nil, fmt.Errorf("read CLI processes: %w", err)
	}
	defer rows.Close()
	var out []CLIProc
	for rows.Next() {
		var p CLIProc
		var start, at int64
		if err := rows.Scan(&p.Tag, &p.PID, &start, &at); err != nil {
			return nil, fmt.Errorf("read CLI processes: %w", err)
		}
		p.StartTime, p.StartedAt = uint64(start), fromNanos(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read CLI processes: %w", err)
	}
	return out, nil
}

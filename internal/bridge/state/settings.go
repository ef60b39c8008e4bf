package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns a named setting's value; ok is false when it was never set.
func (s *Store) Setting(ctx context.Context, name string) (value string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&value)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read setting %s: %w", name, err)
	}
	return value, true, nil
}

// SetSetting stores a named setting.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	if _, err := s.exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value); err != nil {
		return fmt.Errorf("store setting %s: %w", name, err)
	}
	return nil
}

// SwapSetting sets name to value unless it already holds value, and reports
// whether it changed: a check-and-set, so something done "once" is done once
// even when two chats race.
func (s *Store) SwapSetting(ctx context.Context, name, value string) (bool, error) {
	changed, err := s.execOne(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE settings.value <> excluded.value`, name, value)
	if err != nil {
		return false, fmt.Errorf("swap setting %s: %w", name, err)
	}
	return changed, nil
}

// execOne runs one write statement and reports whether it changed exactly
// one row: the check-and-set writes' answer to "did I win?".
func (s *Store) execOne(ctx context.Context, query string, args ...any) (bool, error) {
	res, err := s.exec(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

package state

// LatestSchema exposes the number of migrations to the black-box tests.
func LatestSchema() int { return len(migrations) }

// MigrationsUpTo returns the first n migrations, to build an old database.
func MigrationsUpTo(n int) []string { return migrations[:n] }

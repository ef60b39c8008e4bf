package places

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/handoff"
)

// The accounts of a directory are read from the password database once
// per accountsFor: a directory removed meanwhile still has them, until
// they are looked up again.
func TestAccountCacheKeepsLookupsForAWhile(t *testing.T) {
	dir := t.TempDir()
	wantDaemon, wantOwner, err := handoff.LocalAccounts(dir)
	require.NoError(t, err)
	var a accountCache
	now := time.Unix(1_000_000, 0)
	daemon, owner, err := a.of(dir, now)
	require.NoError(t, err)
	assert.Equal(t, wantDaemon, daemon)
	assert.Equal(t, wantOwner, owner)

	require.NoError(t, os.Remove(dir))
	daemon, _, err = a.of(dir, now.Add(accountsFor-time.Second))
	require.NoError(t, err, "kept")
	assert.Equal(t, wantDaemon, daemon)
	_, _, err = a.of(dir, now.Add(accountsFor))
	assert.ErrorIs(t, err, os.ErrNotExist, "looked up again")
}

package owndir

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSentNameNeverReusesAName(t *testing.T) {
	root, err := Open(t.TempDir(), Sent, true)
	require.NoError(t, err)
	defer root.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	taken := map[string]bool{}
	a := SentName(root, "a b.txt", now, taken)
	b := SentName(root, "a_b.txt", now, taken)
	assert.Equal(t, "20260102-030405-a_b.txt", a)
	assert.Equal(t, "20260102-030405-a_b-2.txt", b, "two names that clean up alike get two files")
}

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In the user unit Claude's tools run as the operator's own uid, so file
// modes cannot keep them from the token file or the user's systemd: the
// unit must hide them.
func TestUserUnitHidesTheTokenAndTheUserManager(t *testing.T) {
	u, err := parseUnit(unitPath("untether-user.service"))
	require.NoError(t, err)
	hidden := u.words("Service", "InaccessiblePaths")
	envFile := ""
	for _, w := range u.words("Service", "EnvironmentFile") {
		envFile = w
	}
	require.NotEmpty(t, envFile)
	assert.Contains(t, hidden, envFile, "the token file is inaccessible to the service (systemd reads it before sandboxing)")
	// The user bus (%t/bus) and the manager (%t/systemd/private) are in the
	// runtime directory, which the unit hides whole: no D-Bus activation,
	// no systemd-run --user outside the sandbox.
	assert.True(t, hidesRuntimeDir(u), "TemporaryFileSystem= covers %t")
}

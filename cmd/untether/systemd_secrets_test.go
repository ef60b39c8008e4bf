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
	assert.Contains(t, hidden, "-%t/bus", "no D-Bus activation outside the sandbox")
	assert.Contains(t, hidden, "-%t/systemd/private", "no systemd-run --user outside the sandbox")
}

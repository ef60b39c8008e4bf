package bridge_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEListsEveryCommand: every command the daemon registers with
// Telegram (the registry's, which also feed /help) has a row in the
// README's command table, so a module cannot add one that users never
// read about.
func TestREADMEListsEveryCommand(t *testing.T) {
	r := newRig(t)
	require.Eventually(t, func() bool { return len(r.tg.Snapshot().Commands) > 0 }, wait, 20*time.Millisecond,
		"the commands registered with setMyCommands")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, c := range r.tg.Snapshot().Commands {
		row := "| `/" + c.Command
		assert.True(t, strings.Contains(string(readme), row+"`") || strings.Contains(string(readme), row+" "),
			"README's command table has no row for /%s", c.Command)
	}
}

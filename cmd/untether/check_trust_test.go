package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
)

func TestTrustWarnings(t *testing.T) {
	collect := func(cfg *config.Config, path string, euid int) []string {
		var out []string
		trustWarnings(cfg, path, euid, func(level, format string, a ...any) {
			out = append(out, level+" "+fmt.Sprintf(format, a...))
		})
		return out
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "untether.toml")

	safe := config.Default()
	assert.Empty(t, collect(&safe, path, 1000), "the defaults, not as root, warn about nothing")

	wide := config.Default()
	wide.Claude.AllowedModes = append(wide.Claude.AllowedModes, config.PermissionBypass)
	wide.Claude.Env = map[string]string{"IS_SANDBOX": "1"}
	wide.Telegram.AllowedChatIDs = []int64{-1, -2}
	envFile := filepath.Join(dir, "untether.env")
	require.NoError(t, os.WriteFile(envFile, []byte(config.EnvBotToken+"=1:x\n"), 0o600))
	require.NoError(t, os.Chmod(envFile, 0o604))
	got := collect(&wide, path, 0)
	require.Len(t, got, 5, "%q", got)
	assert.Contains(t, got[0], "allows bypassPermissions")
	assert.Contains(t, got[1], "IS_SANDBOX")
	assert.Contains(t, got[2], "serves 2 groups")
	assert.Equal(t, "warn "+rootWarning, got[3])
	assert.Contains(t, got[4], envFile+" holds the bot token and is readable by group or others")

	require.NoError(t, os.Chmod(envFile, 0o600))
	assert.Len(t, collect(&wide, path, 0), 4, "a private token file is fine")
}

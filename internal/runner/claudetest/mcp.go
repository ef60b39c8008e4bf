package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BrokenMCPConfig writes an --mcp-config file naming one stdio MCP server,
// "broken", whose command exits at once, and returns its path. The CLI
// reports the server as "failed" in system/init and goes on without it.
func BrokenMCPConfig(t testing.TB) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"broken": map[string]any{"type": "stdio", "command": "/bin/false"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

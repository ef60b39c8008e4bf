package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
)

// TestRealCLIReportsAFailedMCPServer: an MCP server that cannot start is
// named in system/init with its status, which TurnStarted carries.
func TestRealCLIReportsAFailedMCPServer(t *testing.T) {
	cfg := claudetest.BrokenMCPConfig(t)
	r := newRealSession(t, func(c *Config) {
		c.ExtraArgs = append(c.ExtraArgs, "--mcp-config", cfg, "--strict-mcp-config")
	})
	send(t, r.s, "hello there")
	ev, _ := r.log.waitFor(t, 0, "the turn's start", func(ev Event) bool { _, ok := ev.(TurnStarted); return ok })
	ts := ev.(TurnStarted)
	require.Len(t, ts.McpServers, 1)
	assert.Equal(t, McpServer{Name: "broken", Status: "failed"}, ts.McpServers[0])
}

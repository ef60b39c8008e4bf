package runner

import (
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// TestRealCLIResourceLinks: an MCP tool that returns a resource_link (a
// node MCP server, with the real CLI) ends its row with the link as what
// it is, from tool_use_result.resourceLinks.
func TestRealCLIResourceLinks(t *testing.T) {
	env := claudetest.New(t, fakeapi.Script{Rules: fakeapi.ToolTurn("LINKS", "mcp__files__get_report", map[string]any{}, "Linked.")})
	uri := "file://" + env.Workdir + "/report.txt"
	cfg := claudetest.ResourceLinkMCPConfig(t, uri)
	s, log := startSession(t, Config{Binary: env.Binary, Workdir: env.Workdir, Env: env.Vars,
		InheritEnv: []string{"PATH=/usr/bin:/bin"}, Logger: zerolog.New(zerolog.NewTestWriter(t)),
		ExtraArgs: []string{"--mcp-config", cfg, "--strict-mcp-config", "--allowedTools", "mcp__files__get_report"}})
	send(t, s, "LINKS please")
	ev, _ := log.waitFor(t, 0, "the MCP tool's result", func(ev Event) bool {
		f, ok := ev.(ToolFinished)
		return ok && f.Name == "mcp__files__get_report"
	})
	f := ev.(ToolFinished)
	assert.True(t, f.OK)
	require.Len(t, f.Links, 1, "%+v", f)
	assert.Equal(t, ResourceLink{Name: "report.txt", URI: uri, MimeType: "text/plain"}, f.Links[0])
}

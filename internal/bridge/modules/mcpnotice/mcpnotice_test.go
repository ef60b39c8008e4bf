package mcpnotice

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

func TestFailedMCPNote(t *testing.T) {
	tests := []struct {
		name    string
		servers []runner.McpServer
		want    string
	}{
		{"none", nil, ""},
		{"all up or starting", []runner.McpServer{{Name: "a", Status: "connected"}, {Name: "b", Status: "pending"}}, ""},
		{"one failed", []runner.McpServer{{Name: "a", Status: "connected"}, {Name: "db", Status: "failed"}},
			"⚠️ MCP server not available in this session: db (failed). Claude works without its tools."},
		{"two, sorted", []runner.McpServer{{Name: "z", Status: "needs-auth"}, {Name: "db", Status: "failed"}},
			"⚠️ MCP servers not available in this session: db (failed), z (needs-auth). Claude works without its tools."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, failedMCPNote(tt.servers)) })
	}
}

package chat

import (
	"sort"
	"strings"
	"sync"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// mcpModule names the MCP servers that failed to start, once per session
// (issue 24 §4): the CLI reports them in system/init and goes on without
// their tools, so a user who counted on one would otherwise only see Claude
// not using it. "pending" is a server still starting, not a failure.
type mcpModule struct {
	b *Engine

	mu    sync.Mutex
	noted map[state.ChatKey]runner.SessionID // the session a chat was last told about
}

func newMCPModule(b *Engine) *mcpModule {
	return &mcpModule{b: b, noted: map[state.ChatKey]runner.SessionID{}}
}

func (m *mcpModule) Register(r *Registry) {
	r.OnEvent(func(c *Chat, ev runner.Event) {
		ts, ok := ev.(runner.TurnStarted)
		if !ok || c.turn == nil || c.turn.done {
			return
		}
		if note := failedMCPNote(ts.McpServers); note != "" && m.first(c.key, ts.SessionID) {
			c.turn.notes = append(c.turn.notes, note)
		}
	})
}

// first reports whether key has not been told about session yet, and
// records that it now is.
func (m *mcpModule) first(key state.ChatKey, session runner.SessionID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.noted[key] == session && session != "" {
		return false
	}
	m.noted[key] = session
	return true
}

// failedMCPNote is the plain-text line naming the servers that did not
// start, "" if every one did (or is still starting).
func failedMCPNote(servers []runner.McpServer) string {
	var failed []string
	for _, s := range servers {
		switch s.Status {
		case "connected", "pending", "":
			continue
		}
		failed = append(failed, s.Name+" ("+s.Status+")")
	}
	if len(failed) == 0 {
		return ""
	}
	sort.Strings(failed)
	what := "MCP server"
	if len(failed) > 1 {
		what = "MCP servers"
	}
	return "⚠️ " + what + " not available in this session: " + strings.Join(failed, ", ") + ". Claude works without its tools."
}

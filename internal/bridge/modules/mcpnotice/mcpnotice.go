package mcpnotice

import (
	"sort"
	"strings"
	"sync"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// Module is the feature.
type Module struct {
	mu    sync.Mutex
	noted map[state.ChatKey]runner.SessionID // the session a chat was last told about
}

// New builds the module.
func New() *Module {
	return &Module{noted: map[state.ChatKey]runner.SessionID{}}
}

// Register adds the event hook.
func (m *Module) Register(r *chat.Registry) {
	r.OnEvent(func(c *chat.Chat, ev runner.Event) {
		ts, ok := ev.(runner.TurnStarted)
		if !ok || !c.TurnRunning() {
			return
		}
		if note := failedMCPNote(ts.McpServers); note != "" && m.first(c.Key(), ts.SessionID) {
			c.AddTurnNote(note)
		}
	})
}

// first reports whether key has not been told about session yet, and
// records that it now is.
func (m *Module) first(key state.ChatKey, session runner.SessionID) bool {
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

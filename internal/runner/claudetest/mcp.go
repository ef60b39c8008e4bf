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

// linkServer is a stdio MCP server (newline-delimited JSON-RPC) with one
// tool, get_report, whose result is a text block and a resource_link to
// the URI in its first argument. It runs under node, which installing the
// CLI needs anyway.
const linkServer = `
const uri = process.argv[2];
let buf = '';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    if (m.method === 'initialize') {
      send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion,
        capabilities: {tools: {}}, serverInfo: {name: 'files', version: '1.0.0'}}});
    } else if (m.method === 'tools/list') {
      send({jsonrpc: '2.0', id: m.id, result: {tools: [{name: 'get_report', description: 'Links the report',
        inputSchema: {type: 'object', properties: {}}}]}});
    } else if (m.method === 'tools/call') {
      send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'Here is the report.'},
        {type: 'resource_link', uri: uri, name: 'report.txt', mimeType: 'text/plain'}]}});
    } else {
      send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no such method'}});
    }
  }
});
`

// ResourceLinkMCPConfig writes an --mcp-config file naming one stdio MCP
// server, "files", whose tool get_report (mcp__files__get_report to the
// CLI) answers with a resource_link to uri, and returns its path.
func ResourceLinkMCPConfig(t testing.TB, uri string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "links.js")
	if err := os.WriteFile(script, []byte(linkServer), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"type": "stdio", "command": "node", "args": []string{script, uri}}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Package mcpnotice names the MCP servers that failed to start, once per
// session (issue 24 §4): the CLI reports them in system/init and goes on
// without their tools, so a user who counted on one would otherwise only
// see Claude not using it. "pending" is a server still starting, not a
// failure. The line goes into the notes of the session's first turn, in
// its progress message and answer.
package mcpnotice

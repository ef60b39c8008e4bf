// Package fakeapi is a scriptable fake of the Anthropic Messages API for tests
// that drive the real Claude Code CLI offline (ANTHROPIC_BASE_URL pointed at
// it).
//
// A Server listens on 127.0.0.1 only, answers POST /v1/messages (streaming SSE
// or plain JSON) from a Script of ordered Rules, and records every request it
// receives so tests can assert on what the model was sent (history, tool
// results, headers). It also answers the side endpoints the CLI may probe
// (HEAD /api/hello, count_tokens, /v1/models) and gives any other path an
// Anthropic-style 404.
//
// The script format is the JSON format of the reference tool in
// shared/tools/fakeapi, so scripts can be written as Go values or loaded from
// JSON files (ParseScript, LoadScript).
//
// Standard library only: the package must stay usable from any test or tool
// without pulling dependencies into the daemon.
package fakeapi

// Package claudetest is the one way tests start the real Claude Code CLI.
//
// It finds the CLI binary installed by scripts/install-claude.sh (the pinned
// Version, or the one $CLAUDE_VERSION names for a conformance run),
// starts a fakeapi server, and builds the CLI's environment so that a test can
// never talk to the real Anthropic API or any other network service:
//
//   - ANTHROPIC_BASE_URL is always the fake's http://127.0.0.1:PORT URL;
//     OfflineVars refuses any base URL whose host is not 127.0.0.1, ::1 or
//     localhost.
//   - The variables that stop the CLI's side traffic (telemetry, auto-update,
//     error reporting, nonessential calls to api.anthropic.com) are always
//     set, and NO_PROXY covers loopback.
//   - The CLI process gets PATH plus those variables and nothing else from
//     the test process, so a developer's real ANTHROPIC_API_KEY, proxy
//     settings or HOME cannot leak in; extra variables (WithVar) may not touch
//     the API endpoint, credentials, proxies or provider selection.
//
// HOME and the working directory are per-test temporary directories, so
// sessions and settings never mix between tests or with the developer's own.
//
// A few CLI commands reach past the fake API whatever the environment says
// (`claude auth status` with a stored claude.ai login, `claude auth login`
// once a code is pasted); NoNetwork wraps the CLI so such a test runs it in
// a network namespace with no interface at all. The interactive interface
// reaches out too (it clones its plugin marketplace from GitHub): a test of
// it calls LoopbackOnly, which runs the test again in a namespace where
// only loopback, and so the fake API, is reachable. PersonPATH gives a
// shell a claude that runs the CLI offline but with the shell's HOME, for
// tests that run a command line as a person would type it.
package claudetest

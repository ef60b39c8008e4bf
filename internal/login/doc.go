// Package login relays the Claude CLI's own login to someone who is not at
// the machine: it runs the login command under a pseudo-terminal (or with
// pipes), reads its screen, and reports, as events, the sign-in URL it
// shows (URL), its request for the code (NeedCode) and the outcome (Done).
// The caller passes the code the user got back with SubmitCode. Nothing
// blocks: Start returns at once, the events are buffered (there are at most
// three), SubmitCode and Cancel return at once, so a chat's actor can drive
// a session between its other work.
//
// A session ends when the program exits, when its timeout passes (Options,
// DefaultTimeout), on Cancel, or when Start's context ends; the program is
// killed (its whole session or process group) and reaped before Done is
// sent. It dies with the daemon (a parent-death signal; it starts through
// runner.StartOwned, so the daemon's orphan reaper leaves it alone). A
// Relay runs one session at a time and refuses a second with ErrBusy: the
// caller decides whether to say so or Cancel the first.
//
// Secrets: the code is one from SubmitCode on, and so is a token the
// program prints. Both, the parts of a "code#state", and anything shaped
// like a token (sk-ant-…, long opaque runs) are blanked out of every
// message, error and log line; the program's echo of the code is never
// relayed. Done.Token holds setup-token's token as a config.Secret, which
// prints as "[redacted]". The URL is relayed whole (the user must open it)
// but logged without its query.
//
// The screen (screen.go) drops escape sequences, keeps OSC 8 hyperlinks'
// targets (the URL is taken from there first: the visible text of a long
// link may be cut or wrapped), and turns cursor moves into spaces or line
// breaks, so text an Ink interface places word by word reads as words.
//
// # What the real CLI does (2.1.328)
//
// Verified offline, in a temporary HOME and without any network
// (realcli_test.go and the captures in testdata):
//
//   - `claude auth login [--claudeai | --console] [--sso] [--email ADDR]`
//     (--claudeai, a Claude subscription, is the default) prints "Opening
//     browser to sign in…", "If the browser didn't open, visit: URL" and the
//     prompt "Paste code here if prompted > ", then reads a line. It works
//     under a terminal and over pipes alike; on a terminal the URL is an
//     OSC 8 hyperlink and the code is echoed. It makes no network request
//     before the code. Given a code it prints "Signing in…" and tries the
//     exchange with platform.claude.com; offline that fails with "Couldn't
//     log in: getaddrinfo EAI_AGAIN platform.claude.com" on stderr and exit
//     status 1.
//   - The URL is https://claude.com/cai/oauth/authorize with code=true (the
//     manual flow: the callback page, platform.claude.com/oauth/code/callback,
//     shows the code to paste), PKCE (S256) and a state.
//   - `claude setup-token` needs a terminal: over pipes it prints nothing and
//     waits. On one it draws an Ink screen (words placed by cursor moves,
//     queries to the terminal that it does not need answered), the URL as a
//     hyperlink (scope user:inference only), and "Paste code here if
//     prompted". A failed exchange shows "✘ OAuth error: …" and "Press Enter
//     to retry", and waits: the relay ends the session there.
//   - The OAuth endpoints cannot be pointed at a local fake: USE_LOCAL_OAUTH
//     and CLAUDE_LOCAL_OAUTH_* are ignored by this build, and
//     CLAUDE_CODE_CUSTOM_OAUTH_URL accepts only a few Anthropic hosts.
//
// Inferred from the CLI's code and strings, not seen: that `claude auth
// login` prints "Login successful." and exits 0 on success and stores the
// login (on Linux in ~/.claude/.credentials.json); that `claude setup-token`
// prints "Your OAuth token (valid for 1 year):" and the token (sk-ant-oat01-…)
// instead of storing it, for the caller to give the CLI as
// CLAUDE_CODE_OAUTH_TOKEN; what either prints for a wrong code. The relay
// is tested against fakelogin, a program in this repository that behaves as
// described (success, wrong code, dying, never answering).
package login

// Command fakelogin behaves like the Claude CLI's login commands as far as
// a relay can see them, for internal/login's tests: it prints a sign-in URL
// the way `claude auth login` or `claude setup-token` do (2.1.328, as
// captured in ../testdata), reads a code, and succeeds or fails depending on
// the code. It never touches the network or any credentials.
//
//	fakelogin [-style login|setup-token] [-code GOOD] [-url URL] [-token TOKEN] [flags]
//
// With -style login (the default) it prints auth login's lines (the URL as
// an OSC 8 hyperlink on a terminal, plain otherwise), reads a line, then
// prints "Login successful." and exits 0 for the good code, or "Couldn't log
// in: …" on stderr and exits 1. With -style setup-token it draws like Ink
// (words placed by cursor moves), refuses to run without a terminal, prints
// a made-up long-lived token for the good code and exits 0, and for another
// code shows "OAuth error: … Press Enter to retry" and waits, as the real
// one does.
package main

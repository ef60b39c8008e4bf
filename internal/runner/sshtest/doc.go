// Package sshtest runs a throwaway OpenSSH server for tests of projects on
// another host: the system sshd (Debian's openssh-server), bound to
// 127.0.0.1 on a free port, with a host key and one client key made for the
// test, accepting only that key for the current user. The "remote" machine
// is this one, seen through a real ssh connection.
//
// Like the real-CLI tests, a missing sshd skips the test, or fails it when
// UNTETHER_REQUIRE_REAL_CLAUDE=1 (scripts/test.sh installs openssh-server).
//
// With FishLike the server reads every command line by fish's quoting
// rules instead of the login shell's (sshd's ForceCommand runs the
// fishlike program, built by the test), for tests that nothing a user
// controls can turn into a command over there.
package sshtest
